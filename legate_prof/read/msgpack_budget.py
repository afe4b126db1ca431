"""msgpack decoded within a budget of Python objects.

A msgpack map or list costs one byte in the file and a Python dict (64 bytes and more) or list
slot (8 bytes) in memory: a 10 MB bundle header of empty maps took 1.48 GB, a 50 MB runtime
stream of nested empty lists 3.6 GB (issue 37).  msgpack's own limits bound one list's or
map's length, not how many there are.  ``ObjectBudget`` counts, as they are decoded, every
container and every value held in one (msgpack's ``object_hook`` and ``list_hook``), and stops
the decoding (``OverBudget``) past its limits, so what a file can make is proportional to what
an honest file of its size makes (docs/robustness.md).
"""

from __future__ import annotations


class OverBudget(ValueError):
    """The data holds more objects than its size allows: damage, or made to hurt."""


class ObjectBudget:
    """Limits for one decoding (``reset`` starts another): ``objects``, the containers and the
    values they hold; ``containers``, maps and lists alone.  ``hooks()`` are the keyword
    arguments that make msgpack count them."""

    def __init__(self, objects, containers):
        self.objects, self.containers = objects, containers
        self.reset()

    def reset(self):
        self.objects_left, self.containers_left = self.objects, self.containers

    def _spend(self, container):
        self.objects_left -= 1 + len(container)
        self.containers_left -= 1
        if self.objects_left < 0 or self.containers_left < 0:
            raise OverBudget(f"more than {self.objects:,} values or {self.containers:,} maps "
                             "and lists")
        return container

    def hooks(self):
        """msgpack's keyword arguments that count what it decodes."""
        return {"object_hook": self._spend, "list_hook": self._spend}

    def lengths(self):
        """msgpack's keyword arguments that refuse a list or map longer than the whole budget
        (msgpack makes a list as long as its length says before its items arrive: 8 bytes
        each)."""
        return {"max_array_len": self.objects, "max_map_len": self.objects}


# a bundle header's measured density (docs/robustness.md): one value per 7 bytes and one
# container per 30 bytes at the most (the repository's logs, four real ranks)
HEADER_BYTES_PER_OBJECT = 4
HEADER_BYTES_PER_CONTAINER = 16
HEADER_FLOOR = 1 << 12


def header_budget(size):
    """The budget of a msgpack header of ``size`` bytes: about twice as dense as any honest
    one, so that decoding it costs at most ~10 times its size."""
    return ObjectBudget(size // HEADER_BYTES_PER_OBJECT + HEADER_FLOOR,
                        size // HEADER_BYTES_PER_CONTAINER + HEADER_FLOOR)
