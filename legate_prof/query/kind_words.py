"""What an item is, in words ("58 tasks, 58 application calls"): a search's count in the
viewer and in the report says what it counted, so a task and the application call that ran
it — one name, two items — do not read as twice what ``stats`` lists."""

from __future__ import annotations

from legate_prof.model.kinds import ItemKind

# what a result is where it is not a task (a task's name is often its application call's)
KIND_WORDS = {int(ItemKind.APP_CALL): "application call", int(ItemKind.RUNTIME_CALL):
              "runtime call", int(ItemKind.MAPPER_CALL): "mapper call",
              int(ItemKind.META): "meta-task", int(ItemKind.MESSAGE): "message",
              int(ItemKind.RUNTIME_OP): "operation", int(ItemKind.INSTANCE): "instance",
              int(ItemKind.GPU_KERNEL): "GPU kernel",
              int(ItemKind.PROGRAM_WAIT): "wait for a value"}
_PLURAL = {"copy": "copies", "partitioning": "partitionings",
           "wait for a value": "waits for values"}


def kind_word(kind, n):
    """An item kind's noun for ``n`` of them ("task", "copies")."""
    word = {int(ItemKind.TASK): "task", int(ItemKind.COPY): "copy", int(ItemKind.FILL): "fill",
            int(ItemKind.DEP_PART): "partitioning", int(ItemKind.PROF_TASK): "profiling task",
            **KIND_WORDS}.get(int(kind), "item")
    return word if n == 1 else _PLURAL.get(word, word + "s")


def kinds_counted(counts):
    """{kind: count} in words, most first ("58 tasks, 58 application calls")."""
    kinds = sorted((k for k, n in counts.items() if n), key=lambda k: (-counts[k], k))
    return ", ".join(f"{counts[k]:,} {kind_word(k, counts[k])}" for k in kinds)
