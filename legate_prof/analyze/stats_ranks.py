"""Statistics rank by rank (``stats``), as idle time is (``idle_ranks``): what a rank's
worker makes of its rank (``load_profile(..., prepare=PREPARE)``) — its part of the statistics
and, but for ``--no-idle``, its idle time explained as far as it can (``idle_ranks.rank_idle``)
— and, in place of its model, a copy holding what is left to read of it in the parent
(``for_the_parent``): a hand-over of 10 ranks x 1 M items was 1.5 GiB of memory, most of it
columns no step there reads.  The parent adds the parts up (``parts_made``) and names the
lines of the operations a rank said by id (``with_lines_of``): another rank describes them.
Only where nothing is kept for the next command (the timeline kept in the cache is the
ranks' whole, and the parent makes their parts: ``cli.commands.stats``; the workers making
them there too, the ranks handed over whole, was tried: the same wall time at 10 x 1 M,
docs/performance.md).
"""

from __future__ import annotations

import numpy as np

from legate_prof.analyze.stats import compute_stats as compute_whole
from legate_prof.analyze.stats import explained, finish_stats, stats_parts

PREPARE = "legate_prof.analyze.stats_ranks:rank_stats"
PREPARE_NO_IDLE = "legate_prof.analyze.stats_ranks:rank_stats_no_idle"
PART = "stats_part"  # (the part, msgpack's bytes, among the prepared arrays)
# the item columns read here of a rank handed over: the messages' (``message_latency``) and
# the idle time's join over ranks (``rank_links.model_columns``)
PARENT_COLUMNS = ("start", "stop", "create", "ready", "lane", "kind", "fevent", "creator")


class WholeRanksNeeded(Exception):
    """The ranks were handed over for the statistics' shortcut (``PREPARE``), and what is left
    needs them whole: load them again without it."""


def compute_stats(profile, idle=True) -> dict:
    """``stats.compute_stats`` of a profile whose ranks' workers may have made their parts
    (``PREPARE``): theirs added up; ``WholeRanksNeeded`` where they handed over too little
    for what is left."""
    models = [p.model for p in profile.item_parts()]
    made = parts_made(models, getattr(profile, "rank_models", lambda: models)())
    if made is None:
        return compute_whole(profile, idle)
    return {**finish_stats(made, profile.sources, profile.errors,
                           [str(w) for w in profile.warnings]), **_explained(profile, idle)}


def _explained(profile, idle):
    """``stats.explained`` of ranks handed over for ``PREPARE``; ``WholeRanksNeeded`` where
    what the workers prepared cannot tell the idle time."""
    got = explained(profile, idle, whole=False)
    if idle and got["idle"] is None:
        raise WholeRanksNeeded
    return got


def rank_stats(model, idle=True):
    """A rank's worker's part (see ``PREPARE``): named arrays, and the model to hand over."""
    import msgpack
    from legate_prof.analyze.idle_ranks import rank_idle
    out = rank_idle(model) if idle else {}
    part = msgpack.packb(stats_parts(model, elsewhere=True), use_bin_type=True)
    out[PART] = np.frombuffer(part, np.uint8)
    return out, for_the_parent(model)


def rank_stats_no_idle(model):
    return rank_stats(model, idle=False)


def for_the_parent(model):
    """``model`` with only what the parent reads of a rank once its worker made its part:
    ``PARENT_COLUMNS``, the spawn marks (messages), the operations' lines, the small
    tables."""
    from legate_prof.model.event_tables import empty_event_tables
    events = empty_event_tables()
    events["marks"] = model.events["marks"]
    return model.evolve(items={c: model.items[c] for c in PARENT_COLUMNS},
                        waits={c: v[:0] for c, v in model.waits.items()},
                        transfers={c: v[:0] for c, v in model.transfers.items()},
                        utilization_steps={}, events=events,
                        ops={c: model.ops[c] for c in ("op_id", "provenance")})


def handed_over_thin(models):
    """Whether any of ``models`` is a rank its worker handed over for ``PREPARE`` alone."""
    from legate_prof.load.rank_workers import prepared_of
    return any(PART in (prepared_of(m) or ()) for m in models)


def parts_made(models, own):
    """The workers' parts of ``models`` (the profile's, with all ranks' operations; ``own``:
    the same ranks with their own) with their operations' lines named; None where a rank
    has none (it was handed over whole); ``WholeRanksNeeded`` where another lacks it, or two
    ranks describe one operation (which rank's line counts is then the run's to say)."""
    import msgpack
    from legate_prof.load.rank_workers import prepared_of
    made = [prepared_of(m) for m in models]
    if not models or any(p is None or PART not in p for p in made):
        if handed_over_thin(models):
            raise WholeRanksNeeded
        return None
    ids = np.sort(np.concatenate([np.asarray(m.ops["op_id"], np.uint64) for m in own]))
    if np.any(ids[1:] == ids[:-1]):
        raise WholeRanksNeeded
    parts = []
    for m, p in zip(models, made):
        part = msgpack.unpackb(np.asarray(p[PART]).tobytes(), raw=False,
                               strict_map_key=False)
        part["tables"] = {k: with_lines_of(t, m) for k, t in part["tables"].items()}
        parts.append(part)
    return parts


def with_lines_of(part, model):
    """A rank's ``name_parts`` with the lines of the operations it said by id (``elsewhere``)
    named from ``model``'s (all ranks' operations)."""
    out = {}
    for name, p in part.items():
        p = dict(p)
        ids = p.pop("elsewhere", None)
        if ids:
            prov = model.op_provenance(np.asarray(ids, np.uint64)).tolist()
            p["provenances"] = sorted(set(p["provenances"])
                                      | {model.provenances[q] for q in prov if q})
        out[name] = p
    return out
