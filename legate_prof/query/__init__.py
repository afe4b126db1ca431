"""The one door to a profile: ``ProfileSource`` answers the lane tree, lane tiles (boxes,
state pieces, merged gray bands at a pixel width), summary tiles, item details and search; a
``RankedSource`` answers the same over several ranks' models without merging them.  The
viewer, screenshots and the report draw only from here.

May import ``load`` and below.
"""
