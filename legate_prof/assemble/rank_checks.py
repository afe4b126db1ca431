"""Checks on the set of rank files given together, one warning line per problem: files of
another run, a rank twice, ranks missing, ranks whose clocks are so far apart that their
timelines do not overlap.  What can be shown is shown: the files are all kept."""

from __future__ import annotations

from legate_prof.present.units import format_ns

# Without the times their timelines span (bundles written before ranks said them): ranks of
# one run start within a minute of each other
SAME_RUN_ZERO_TIME_NS = 60 * 10**9


def _ints(v):
    """``v`` when it is a list of ints (a bundle's rank entry is a stranger's too), else ()."""
    if isinstance(v, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool)
                                            for x in v):
        return v
    return ()


def _span(r):
    """(first, last) of a rank's timeline on its clock; None where unknown: the log of a run
    that crashed holds no timeline (Legion writes it at shutdown), so its end tells nothing."""
    s = _ints(r.get("span_ns"))
    return (int(s[0]), int(s[1])) if len(s) == 2 and int(s[1]) > 0 else None


def _runs(legion):
    """The files grouped into runs, the run most files are of first: one run's ranks say one
    number of ranks, and each started (its ``ZeroTime``) before another had ended (zero time
    + last time on its clock; a minute where that is unknown)."""
    clusters = []
    for n in sorted({int(r["num_nodes"]) for r in legion}):
        group = sorted((r for r in legion if int(r["num_nodes"]) == n),
                       key=lambda r: r["zero_time"])
        current, reach = [], None
        for r in group:
            if current and r["zero_time"] > reach:
                clusters.append(current)
                current = []
            if not current:
                reach = r["zero_time"]
            span = _span(r)
            reach = max(reach, r["zero_time"] + (span[1] if span else SAME_RUN_ZERO_TIME_NS))
            current.append(r)
        if current:
            clusters.append(current)
    clusters.sort(key=lambda c: (-len(c), min(r["rank"] for r in c), c[0]["zero_time"]))
    return clusters


def _other_runs_line(odd, main):
    files = ", ".join(r["file"] for r in odd[:3]) + (" …" if len(odd) > 3 else "")
    n_main, n_odd = int(main[0]["num_nodes"]), int(odd[0]["num_nodes"])
    if n_odd != n_main:
        why = f"of a {n_odd}-rank run, the others of a {n_main}-rank run"
    else:
        def end(r):
            return r["zero_time"] + (_span(r) or (0, 0))[1]
        start, stop = min(r["zero_time"] for r in main), max(map(end, main))
        if odd[0]["zero_time"] > stop:
            why = f"started {format_ns(odd[0]['zero_time'] - stop)} after the others' run ended"
        else:
            why = f"ended {format_ns(start - end(odd[0]))} before the others' run started"
    return (f"warning: {files} {'is' if len(odd) == 1 else 'are'} not of the others' run "
            f"({why}): files of different runs mixed? Shown as given")


def _apart_line(ranks):
    """One line when the ranks' timelines fall into groups that do not overlap in time."""
    spans = sorted(((_span(r), r["rank"]) for r in ranks if _span(r) and _span(r)[1] > 0),
                   key=lambda x: x[0])
    groups = []
    for (a, b), rank in spans:
        if groups and a <= groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], b)
            groups[-1][2].append(rank)
        else:
            groups.append([a, b, [rank]])
    if len(groups) < 2:
        return []
    shown = "; ".join(f"rank {', '.join(map(str, sorted(g[2])[:4]))}"
                      f"{' …' if len(g[2]) > 4 else ''}: {format_ns(g[0])} – {format_ns(g[1])}"
                      for g in groups[:4])
    gap = max(b[0] - a[1] for a, b in zip(groups, groups[1:]))
    return [f"warning: the ranks' timelines do not overlap ({shown}): their clocks are at least "
            f"{format_ns(gap)} apart (or the files are of different runs); each rank is shown "
            "on its own clock, boxes of different ranks cannot be compared in time"]


def cross_file_problems(ranks, wanted=None):
    """Warnings about the set of files: files of other runs, a rank twice, ranks missing
    (of ``wanted``, default all of the run's), ranks that do not overlap in time."""
    out = []
    legion = [r for r in ranks if r.get("format_version")]
    runs = _runs(legion)
    odd = [r for run in runs[1:] for r in run]
    if odd:
        out.append(_other_runs_line(odd, runs[0]))
    by_rank = {}
    for r in ranks:
        by_rank.setdefault(r["rank"], []).append(r["file"])
    for rank, files in sorted(by_rank.items()):
        if len(files) > 1:
            out.append(f"warning: rank {rank} is in {len(files)} files ({', '.join(files[:3])}); "
                       "files of different runs mixed?")
    out += _shared_processors_lines(ranks)
    size = int(runs[0][0]["num_nodes"]) if runs else 0
    if 1 < size <= 1 << 16:
        expected = set(range(size)) if wanted is None else set(wanted) & set(range(size))
        missing = sorted(expected - set(by_rank))
        if missing:
            shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
            out.append(f"warning: {len(missing)} of the run's {size} ranks "
                       f"{'has' if len(missing) == 1 else 'have'} no readable file (not "
                       f"given, or not readable: rank {shown}); the timeline shows the "
                       "others only")
    if runs:
        out += _apart_line(runs[0])
    return out


def _shared_processors_lines(ranks):
    """Files whose items ran on processors of a node that is not their rank (ids say which
    node: those items are on that rank's lanes), or of a node another file's ran on too."""
    by_node = {}
    for r in ranks:
        for node in _ints(r.get("proc_nodes")):
            by_node.setdefault(node, []).append(r)
    out = []
    for node, rs in sorted(by_node.items()):
        files = ", ".join(r["file"] for r in rs[:3]) + (" …" if len(rs) > 3 else "")
        if len(rs) > 1:
            out.append(f"warning: {files} ran on the same processors (of node {node}: their "
                       f"ids collide), so their items share rank {node}'s lanes: files of "
                       "different runs, or a file's rank changed?")
        elif int(rs[0]["rank"]) != node:
            out.append(f"warning: {files} (rank {rs[0]['rank']}) ran on processors of node "
                       f"{node}: its items are on rank {node}'s lanes")
    return out


STREAM_SLACK_NS = 10**9


def streams_of_their_runs(logs, streams):
    """(the runtime streams that belong to the run of their rank's log, a warning line for each
    other one).  A stream starts after its rank's Legion clock started (``ZeroTime``) and
    before its log's last record; one of another run would be drawn seconds or days away,
    so it is left out.  A rank has one stream: of two that fit (two runs' folders given,
    the second run started within a second of the first one's end: a review read its waits
    under the first run's lines), the one beside the log, else the one that began nearest
    its clock's start, is kept (``_one_a_rank``)."""
    from legate_prof.assemble.record_items import log_span
    logs_by_rank = {}
    for log in logs:
        md = log.table("MachineDesc")
        if len(md):
            logs_by_rank.setdefault(int(md[0]["node_id"]), log)
    kept, out = [], []
    for st in streams:
        log = logs_by_rank.get(int(st.header.get("rank", 0)))
        zt = log.table("ZeroTime") if log is not None else ()
        last = log_span(log)[1] if log is not None else 0
        start = int(st.header.get("start_ns") or st.first_ns())
        if len(zt) and last > 0 and int(zt["zero_time"][0]):
            rel = start - int(zt["zero_time"][0])
            if not -STREAM_SLACK_NS <= rel <= last + STREAM_SLACK_NS:
                when = (f"{format_ns(-rel)} before" if rel < 0
                        else f"{format_ns(rel - last)} after the end of")
                out.append(f"warning: {st.path}: not of the run of {log.path} (it starts "
                           f"{when} that run); left out")
                continue
        kept.append(st)
    return _one_a_rank(kept, logs_by_rank, out)


def _one_a_rank(streams, logs_by_rank, out):
    """(``streams``, one a rank: beside its rank's log, else nearest its clock's start;
    ``out`` and a warning for each other one)."""
    import os

    def fit(st):
        log = logs_by_rank.get(int(st.header.get("rank", 0)))
        if log is None:
            return (0, 0)
        zt = log.table("ZeroTime")
        start = int(st.header.get("start_ns") or st.first_ns())
        return (os.path.dirname(os.path.abspath(st.path))
                != os.path.dirname(os.path.abspath(log.path)),
                abs(start - int(zt["zero_time"][0])) if len(zt) else 0)
    best = {}
    for st in streams:
        r = int(st.header.get("rank", 0))
        if r not in best or fit(st) < fit(best[r]):
            best[r] = st
    kept = [st for st in streams if best[int(st.header.get("rank", 0))] is st]
    for st in streams:
        if st not in kept:
            keep = best[int(st.header.get("rank", 0))]
            out.append(f"warning: {st.path}: a second runtime stream of rank "
                       f"{int(st.header.get('rank', 0))} (kept {keep.path}, of its log's "
                       "run); left out")
    return kept, out
