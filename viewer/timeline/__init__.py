"""The timeline: the widget (``widget``), the item that paints the lanes (``item``) from the
query API's tiles (``tile_cache``, ``rect_batch``), its axes and view box, the lane tree's
layout, the sticky rank header, the scrollbar around it, and the critical path's overlay
(``critical_path``: computed off the window's thread and walked; ``path_overlay``: drawn)."""
