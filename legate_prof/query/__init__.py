"""The one door to a profile: ``ProfileSource`` answers the lane tree, lane tiles (boxes,
state pieces, merged gray bands at a pixel width), summary tiles, item details and search; a
``RankedSource`` answers the same over several ranks' models without merging them.  The
viewer, screenshots and the report draw only from here.

May import ``load`` and below.
"""

from __future__ import annotations

from legate_prof.assemble.rank_set import RankSet
from legate_prof.model.kinds import GROUP_COLOR, GROUP_KEYS, ItemKind
from legate_prof.present.limits import MIN_PX
from legate_prof.query.details import Field
from legate_prof.query.kind_words import KIND_WORDS, kind_word, kinds_counted
from legate_prof.query.lane_tree import GroupInfo, LaneInfo, ProfileInfo
from legate_prof.query.ranked_source import RankedSource
from legate_prof.causality.run_path import PATH_VIA_WORDS
from legate_prof.load.inputs import inputs_notes
from legate_prof.query.source import ProfileSource
from legate_prof.query.tiles import READY, RUNNING, STATE_NAMES, WAITING, Hit, LaneTile, TileRow

GROUP_ORDER = tuple(GROUP_KEYS)  # display order of lane groups under a rank
GROUP_COLORS = dict(GROUP_COLOR)  # summary colour per lane group


def as_source(profile) -> ProfileSource:
    """The query API over ``profile``: itself if it is a source, a ``RankedSource`` over a
    ``RankSet``, else a ``ProfileSource`` over the model."""
    if isinstance(profile, ProfileSource):
        return profile
    if isinstance(profile, RankSet):
        return RankedSource(profile)
    return ProfileSource(profile)


def open_profile(paths, progress=None, ranked=False, use_cache=False,
                 partial=None) -> ProfileSource:
    """Read profiles (logs, runtime streams, bundles, folders) into a source; bad input raises
    ``ProfileError`` naming the file.  ``ranked``/``use_cache``/``partial``: as
    ``load_profile``'s (the viewer's File → Open: ranks unmerged, lanes stacked when drawn;
    the ranks built so far, shown while the rest builds)."""
    from legate_prof.load.loader import load_profile
    return as_source(load_profile([str(p) for p in paths], progress=progress, ranked=ranked,
                                  use_cache=use_cache, partial=partial))


__all__ = ["ProfileSource", "RankedSource", "as_source", "open_profile", "inputs_notes",
           "ProfileInfo",
           "GroupInfo", "LaneInfo", "LaneTile", "TileRow", "Hit", "Field", "MIN_PX", "RUNNING",
           "READY", "WAITING", "STATE_NAMES", "GROUP_ORDER", "GROUP_COLORS", "ItemKind",
           "PATH_VIA_WORDS", "KIND_WORDS", "kind_word", "kinds_counted"]
