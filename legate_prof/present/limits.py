"""How much the timeline shows: the one set of drawing limits the viewer, screenshots and the
report share, so that the same profile is laid out and merged the same way in each."""

MIN_PX = 3.0  # items narrower than this many screen pixels merge into gray bands
LABEL_MIN_PX = 48.0  # boxes and bands at least this wide carry a label
MAX_LABELS = 400  # labels painted per frame, at most
MAX_LANES_EXPANDED = 48  # a profile with at most this many lanes opens with them expanded
MAX_ROWS_EXPANDED = 12  # ... except lanes stacked deeper than this (memories)
MAX_LANE_H = 12.0  # a lane with more stacking rows packs them into this many row heights
