"""Operations of the array runtime's stream drawn as what they are.

The stream records when the program submitted each operation; Legate hands operations to Legion
later (its scheduling window), and their tasks run later still.  An operation's box therefore
runs from its submission to when its last task stopped, waiting (lightest shade) until its
first task was ready, ready until that task started, running after — the reference's shades for
a task's states.  An operation's tasks are the Legion tasks of the same name launched from the
same line on the same rank (every rank submits the operation; its points there are its tasks
there), in the order Legion numbered them: when a line's tasks divide evenly among its operations (each launch
has the same number of points), the k-th operation owns the k-th run of them.  Where they do not
(or no Legion log was read: a crashed run), nothing is known of when it ran, and its box is
drawn waiting from submission to the next submission.
"""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import ItemKind, node_of_id
from legate_prof.model.sort_order import lex_order, stable_order, unique_values, unique_with


def operation_spans(parts, logs, prov_strings, runtime_ops):
    """Stretch the runtime operations in ``parts`` (``ItemParts.parts``) to their tasks' stop
    and return (their waits as (row among all parts' rows, start, ready, end) arrays, the
    ranks whose stream's clock reads ahead of their log's: ``stream_leads``, the operations
    moved back by it; the caller moves the rest of those ranks' streams).

    ``runtime_ops`` is (op ids, their source lines) of the streams' operations (and arrays,
    whose ids no operation part holds); ``prov_strings`` maps
    a Legion provenance id to its text."""
    offsets = np.cumsum([0] + [len(p["start"]) for p in parts])
    op_parts = [k for k, p in enumerate(parts) if int(p["kind"][0]) == ItemKind.RUNTIME_OP]
    if not op_parts:
        return _no_waits(), {}
    site_of_op = dict(zip(runtime_ops[0].tolist(), runtime_ops[1]))
    lines = {}  # source line text -> small int

    def line_ids(texts):
        return np.array([lines.setdefault(t, len(lines)) for t in texts], np.int64)

    op_rows = np.concatenate([np.arange(offsets[k], offsets[k + 1]) for k in op_parts])
    op_part = np.concatenate([[k] * len(parts[k]["start"]) for k in op_parts]).astype(np.int64)
    op_pos = op_rows - offsets[op_part]
    op_name = np.concatenate([np.asarray(parts[k]["name"]) for k in op_parts]).astype(np.int64)
    op_submit = np.concatenate([parts[k]["start"] for k in op_parts])
    op_stop = np.concatenate([parts[k]["stop"] for k in op_parts])
    op_line = line_ids(site_of_op.get(int(i), "") for k in op_parts
                       for i in parts[k]["op_id"].tolist())
    op_rank = np.concatenate([np.asarray(parts[k]["rank"]) for k in op_parts]).astype(np.int64)
    task = _tasks(parts, logs, prov_strings, line_ids)
    width = max(len(lines), 1)
    ranks = int(max(op_rank.max(initial=0), task["rank"].max(initial=0))) + 1
    op_key = (op_name * width + op_line) * ranks + op_rank
    t_key = (task["name"] * width + task["line"]) * ranks + task["rank"]
    found = _matched(lex_order((op_submit, op_key)), op_key,
                     lex_order((task["op_id"], t_key)), t_key)  # (Legion's numbering order)
    leads = stream_leads(found, op_submit, op_rank, task)
    shift = np.zeros(ranks, np.int64)
    for r, lead in leads.items():
        shift[r] = lead["ns"]
    op_submit, op_stop = op_submit - shift[op_rank], op_stop - shift[op_rank]
    new_stop = op_stop.copy()
    # unmatched operations wait from submission to the next one (replaced where matched)
    waits = [(np.arange(len(op_key)), op_submit, op_stop, op_stop)]
    matched = np.zeros(len(op_key), bool)
    for ops, mine in found:
        new_stop[ops] = np.maximum(task["stop"][mine].max(axis=1), op_submit[ops] + 1)
        waits.append(_operation_waits(ops, op_submit[ops], new_stop[ops], task, mine))
        matched[ops] = True
    first = waits[0]
    keep = ~matched[first[0]]
    waits[0] = tuple(a[keep] for a in first)
    w_op, w_start, w_ready, w_end = (np.concatenate(c) for c in zip(*waits))
    for k in op_parts:
        sel = op_part == k
        _put_times(parts[k], op_pos[sel], op_submit[sel] if leads else None, new_stop[sel])
    return {"row": op_rows[w_op], "start": w_start, "ready": w_ready, "end": w_end}, leads


def _put_times(part, pos, submit, stop):
    """The operations' stops (in place of the next submission) into their part's columns,
    and their submissions where moved (a stream item's create and ready are its start)."""
    col = np.asarray(part["stop"]).copy()
    col[pos] = stop
    part["stop"] = col
    if submit is not None:
        col = np.asarray(part["start"]).copy()
        col[pos] = submit
        part["start"] = part["create"] = part["ready"] = col


def _matched(o_order, op_key, t_order, t_key):
    """[(operations, their tasks: a row per operation)] of each (name, line, rank) whose
    tasks divide evenly among its operations: the k-th operation (by submission, ``o_order``)
    owns the k-th run of tasks (by Legion's op id, ``t_order``)."""
    ok_k, t_k = unique_with(op_key, counts=True), unique_with(t_key, counts=True)
    tasks_per_key = dict(zip(t_k[0].tolist(), t_k[1].tolist()))
    o_bounds = np.searchsorted(op_key[o_order], ok_k[0])
    t_sorted_key = t_key[t_order]
    found = []
    for key, lo, n_ops in zip(ok_k[0].tolist(), o_bounds.tolist(), ok_k[1].tolist()):
        n_tasks = tasks_per_key.get(key, 0)
        if n_tasks == 0 or n_tasks % n_ops:
            continue  # nothing known of when these ran: drawn waiting
        ops = o_order[lo:lo + n_ops]
        t0 = int(np.searchsorted(t_sorted_key, key))
        found.append((ops, t_order[t0:t0 + n_tasks].reshape(n_ops, n_tasks // n_ops)))
    return found


def stream_leads(found, submit, rank, task):
    """{rank: {"ns", "late", "ops"}} where a rank's runtime stream runs ahead of its Legion
    log's clock: an operation is submitted before Legion creates its tasks, in the same
    process, so a submission stamped after its first task's creation (``late`` of the ``ops``
    matched) says the stream's clock reads ahead, by at least the largest such lead (``ns``):
    the least shift that puts every submission before its tasks (as the messages' skew is
    found).  Measured: the guide's 4-rank run, rank 0: 99 of 2,709 late, by up to 9.2 ms;
    the other ranks and runs had every submission 0.2 ms or more before its tasks."""
    if not found:
        return {}
    ops = np.concatenate([o for o, _ in found])
    first_created = np.concatenate([task["create"][m].min(axis=1) for _, m in found])
    ahead = submit[ops].astype(np.int64) - first_created.astype(np.int64)
    out = {}
    for r in unique_values(rank[ops[ahead > 0]]).tolist():
        mine = rank[ops] == r
        out[int(r)] = {"ns": int(ahead[mine].max()), "late": int(np.count_nonzero(ahead[mine] > 0)),
                       "ops": int(np.count_nonzero(mine))}
    return out


def _operation_waits(ops, submit, stop, task, mine):
    """(operation, start, ready, end) of the waits of operations whose tasks are the rows of
    ``mine``: from submission until the first task was ready (waiting) and started (ready),
    then every gap while none of its tasks ran (waiting until the next task was ready)."""
    start, end, ready = (task[c][mine] for c in ("start", "stop", "ready"))
    order = np.argsort(start, axis=1, kind="stable")
    start, end, ready = (np.take_along_axis(a, order, axis=1) for a in (start, end, ready))
    first_ready = np.clip(ready.min(axis=1), submit, stop)
    out = [(ops, submit, first_ready, np.clip(start[:, 0], first_ready, stop))]
    ran_to = np.maximum.accumulate(end, axis=1)
    gap = start[:, 1:] > ran_to[:, :-1]
    rows, cols = np.nonzero(gap)
    g0, g1 = ran_to[rows, cols], start[rows, cols + 1]
    out.append((ops[rows], g0, np.clip(ready[rows, cols + 1], g0, g1), g1))
    return tuple(np.concatenate(c) for c in zip(*out))


def _tasks(parts, logs, prov_strings, line_ids):
    """name id, rank, source line id, create, ready, start, stop of every Legion task in
    ``parts``."""
    cols = {c: [] for c in ("name", "rank", "op_id", "create", "ready", "start", "stop")}
    for p in parts:
        if int(p["kind"][0]) != ItemKind.TASK:
            continue
        cols["name"].append(np.asarray(p["name"]).astype(np.int64))
        cols["rank"].append(node_of_id(np.asarray(p["ref"], np.uint64)).astype(np.int64))
        for c in ("op_id", "create", "ready", "start", "stop"):
            cols[c].append(np.asarray(p[c]))
    out = {c: (np.concatenate(v) if v else np.zeros(0, np.int64)) for c, v in cols.items()}
    op_table = [log.table("OperationInstance") for log in logs]
    op_table = [t for t in op_table if len(t)]
    if not op_table or len(out["op_id"]) == 0:
        out["line"] = np.full(len(out["name"]), -1, np.int64)
        return out
    ops = np.concatenate(op_table) if len(op_table) > 1 else op_table[0]
    o = stable_order(ops["op_id"])
    ids, prov = ops["op_id"][o], ops["provenance"][o]
    pos = np.minimum(np.searchsorted(ids, out["op_id"]), len(ids) - 1)
    task_prov = np.where(ids[pos] == out["op_id"], prov[pos], 0)
    uniq, inv = unique_with(task_prov, inverse=True)
    texts = [prov_strings.get(int(p), "") if p else "" for p in uniq.tolist()]
    out["line"] = line_ids(texts)[inv] if len(uniq) else np.zeros(0, np.int64)
    return out


def _no_waits():
    z = np.zeros(0, np.int64)
    return {"row": z, "start": z, "ready": z, "end": z}
