"""Why things waited: the engine under the critical path.  From a profile's items and Realm
events: the event graph (``event_graph``), each item's critical predecessor as the
reference links it (``critical_links``, rank by rank in ``rank_links``, by the rules of
``link_rules`` over the lookups of ``link_lookups`` and ``call_index``), the messages'
latency and the nodes' clocks (``message_latency``), and the run's critical path
(``run_path``).

No door: ``query`` answers through it, ``analyze`` reads it.  May import ``assemble`` and
below (models, event tables, units).
"""
