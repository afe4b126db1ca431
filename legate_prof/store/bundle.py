"""Writing a profile as one bundle: a model (stored stacked, with its indexes) or several
ranks' models written as their merged model would be, rank by rank (``ranks_bundle``).  The
file format itself is ``bundle_file``."""

from __future__ import annotations

from legate_prof.model.stacking import stacked_layout
from legate_prof.store.bundle_file import Deferred, check_stop, write_tables
from legate_prof.store.ranks_bundle import write_ranks_bundle


def write_bundle(model, path, indexes=True, stop=None, mode=0o666, handover=False):
    """Write a model, or a source, through a temporary file renamed at the end: a reader
    never sees half a bundle.

    ``indexes=False`` leaves out the lookup indexes (a rank's model on its way to be merged,
    whose indexes would be rebuilt anyway).  With them, a model built unstacked is stored
    stacked (``stacked_layout``): a bundle reopens with every lane ready to draw.  A source
    over several ranks' models is written as their merged model would be, rank by rank
    (``ranks_bundle``).  ``stop`` (a function): asked as the write goes on; when it says
    so, the write ends with ``bundle_file.WriteStopped`` and leaves nothing.  ``mode``: the
    file's permissions, less the umask (a cache entry: the owner's only).  ``handover``: a
    rank's model into the run's own hand-over folder (``bundle_file.write_tables``)."""
    if len(model.item_parts()) > 1:
        return write_ranks_bundle(model, path, stop, mode)
    model = model.merged_model()
    items, waits, transfers, index = model.items, model.waits, model.transfers, None
    if indexes:  # stored too: rebuilding them costs seconds at 10M items
        check_stop(stop)
        order, rows, waits, transfers, index = stacked_layout(model)
        if order is not None:
            items = {c: (rows if c == "row" else Deferred.gathered(a, order))
                     for c, a in items.items()}
    return write_tables(model, path, items, waits, transfers, model.ops, index, indexes,
                        stop=stop, mode=mode, handover=handover)
