"""Record tables into one model: items from records, lanes and rows, waits matched to their
tasks, nested calls, utilization, the runtime's stream items, several ranks merged (or held
side by side as a ``RankSet``), legate's out-of-memory report marked.

May import ``read``, ``model``, ``present`` and ``errors``.
"""
