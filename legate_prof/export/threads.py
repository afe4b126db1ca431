"""The timeline exports' threads (Chrome) and tracks (Perfetto): one per row of every lane.

Both formats require the slices of one thread or track to nest or be disjoint: a reader drops
those that cross.  A lane's rows are laid out so that no two items of one row overlap, while
the items of a lane do cross (kernels on concurrent streams, a task that runs during another's
wait), so a row, not a lane, is what a thread can hold.
"""

from __future__ import annotations

import numpy as np


def row_offsets(model):
    """Index of the first row of each lane among all lanes' rows (and the total, last): the
    rows the items use or the lane says it has, at least one."""
    rows = np.maximum(model.lanes["rows"].astype(np.int64), 1)
    if model.n_items:
        np.maximum.at(rows, model.items["lane"].astype(np.int64),
                      model.items["row"].astype(np.int64) + 1)
    return np.concatenate([[0], np.cumsum(rows)])


def thread_name(title, row):
    """What a user reads for a lane's row: the lane, then the row after the first."""
    return title if row == 0 else f"{title} · row {row}"
