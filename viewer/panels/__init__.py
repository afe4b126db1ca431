"""The panels beside the timeline: the pinned details (``details``), search results
(``search``), the findings (``findings``), the legend (``legend``) and the lane controls of
the toolbar and View menu (``lane_controls``)."""
