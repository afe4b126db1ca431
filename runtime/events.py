"""Hooks for the runtime's event stream (written only under ``--profile``; see stream.py)."""

from __future__ import annotations

_sink = None


def set_sink(sink):
    global _sink
    _sink = sink


def has_sink() -> bool:
    """Whether a stream is already receiving the events."""
    return _sink is not None


def operation(name, site, code="", operands=()):
    if _sink is not None:
        _sink.operation(name, site, code, operands)


def value_waiting(start_ns, array_id, site):
    """The program began to wait for the values of an array (``value_wait`` when it ends)."""
    if _sink is not None:
        _sink.value_waiting(start_ns, array_id, site)


def value_wait(start_ns, end_ns, array_id, site):
    """The program waited from ``start_ns`` to ``end_ns`` for the values of an array."""
    if _sink is not None:
        _sink.value_wait(start_ns, end_ns, array_id, site)


def array_created(shape, dtype, site):
    if _sink is not None:
        return _sink.array_created(shape, dtype, site)
    return None


def array_released(array_id):
    if _sink is not None and array_id is not None:
        _sink.array_released(array_id)
