"""The frozen columnar model of one profile: ``TraceModel`` (items, lanes, waits, transfers,
operations as numpy columns), its lazily built indexes, the interval algebra it is built with,
the kinds of processors, memories, items and lane groups, and the one naming of lanes.

May import ``present`` and ``errors``; knows nothing of files.
"""
