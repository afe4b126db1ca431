"""``legate_prof compare A B``: what changed between two runs, by source line and lane group.

A line of run A is paired with a line of run B by what it is, not only where it is: the two
runs' lines are aligned in file order on their code (which the array runtime records with each
operation), so a renamed script, or one with lines added or removed, still pairs line for line;
lines whose code was not recorded (a program launching Legate tasks itself) pair by
``file:line`` — the file's name, not its folder — when they launched the same operations.
Between two aligned lines, an edited line pairs with the one at its place that launched the
same operations, or else that assigns the same name and launched some of them (uncertain
pairs, marked and said).  A line that launched nothing but waited for a value (a final
``print(x)``) pairs so too, on its code and what it waited for, and shows its waiting.  A
line that is in one run only is said, never compared with another.
"""

from __future__ import annotations

import difflib
import os
import re

import numpy as np

from legate_prof.model.kinds import GROUP_TITLE, MEMORY_GROUPS, ItemKind
from legate_prof.model.sort_order import unique_values
from legate_prof.analyze.critical_text import INFERRED_WORDS
from legate_prof.analyze.path_lines import PROGRAM_START_TITLE, SHUTDOWN_TITLE, UNKNOWN_TITLE
from legate_prof.present.units import format_bytes, format_ns

APP_KINDS = (int(ItemKind.TASK), int(ItemKind.GPU_KERNEL))
COPY_KINDS = (int(ItemKind.COPY),)
FILL_KINDS = (int(ItemKind.FILL),)
FIELDS = ("tasks", "task_ns", "copies", "copy_bytes", "fills", "fill_bytes")
WAIT_FIELDS = ("waits", "waited_ns")  # the program's waits for values at a line


def _site(prov):
    """'dir/prog.py:21' -> ('prog.py', 21): the line of any copy of the program."""
    path, _, line = prov.rpartition(":")
    return (os.path.basename(path), int(line)) if line.isdigit() else (prov, 0)


NO_LINE = "(no line)"


def per_line(model, code=None, source=None):
    """{provenance: {file, line, code, operations, tasks, task_ns, copies, copy_bytes,
    fills, fill_bytes}} of the lines that launched tasks or moved or filled data, and of
    the lines the runtime's stream of ``source`` records operations of (the model's, through
    the door; None: Legion's lines alone), with those operations: Legate realizes
    ``np.ones(N)`` lazily, its fill carrying the next line's provenance, so the line itself
    held no Legion item, and a run whose path did not charge it had no such line ("mr2.py:3:
    in A only", a review).  A line's code is the run's, else ``code``'s (read from the
    program's file: ``load.source_code``); and under ``NO_LINE`` the ``FIELDS`` of the work
    no line launched (the lines' copies added up to 6 of `stats`' 24: 18 of no line, left
    out, a review)."""
    from legate_prof.analyze.run_counts import operations_by_line
    code = code or {}
    out = {NO_LINE: {f: 0 for f in FIELDS}}

    def row_of(text):
        if text not in out:
            file, line = _site(text)
            out[text] = {"file": file, "line": line, "operations": set(),
                         "code": model.line_text.get(text) or code.get(text, ""),
                         **{f: 0 for f in FIELDS}}
        return out[text]
    it = model.items
    prov = model.op_provenance(it["op_id"])
    dur = it["stop"] - it["start"]
    size = np.zeros(model.n_items, np.float64)
    size[model.transfers["item"]] = model.transfers["size"]
    for kinds, n_key, v_key, values in ((APP_KINDS, "tasks", "task_ns", dur),
                                         (COPY_KINDS, "copies", "copy_bytes", size),
                                         (FILL_KINDS, "fills", "fill_bytes", size)):
        sel = np.isin(it["kind"], kinds)
        p = prov[sel]
        count = np.bincount(p, minlength=len(model.provenances))
        total = np.bincount(p, weights=values[sel].astype(np.float64),
                            minlength=len(model.provenances))
        names = {}
        if n_key == "tasks":
            for q, nm in zip(p.tolist(), it["name"][sel].tolist()):
                names.setdefault(q, set()).add(model.names[nm])
        out[NO_LINE][n_key] += int(count[0]) if len(count) else 0
        out[NO_LINE][v_key] += int(total[0]) if len(total) else 0
        for k in np.flatnonzero(count[1:]).tolist():
            k += 1
            row = row_of(model.provenances[k])
            row[n_key] += int(count[k])
            row[v_key] += int(total[k])
            row["operations"] |= names.get(k, set())
    for q, names in (operations_by_line(source) if source is not None else {}).items():
        row_of(source.provenances[q])["operations"] |= {source.names[n] for n in names}
    return out


def pair_lines(la, lb):
    """[(provenance in A or None, provenance in B or None, how they were paired)]: the lines
    aligned in file order on their code — the same code pairs ("code"); between two aligned
    lines, a line whose code changed pairs with the one at its place that launched the same
    operations ("edited": uncertain, said); lines without recorded code pair by file name and
    line number when they launched the same operations ("line"); the others stay alone
    (None)."""
    order_a = sorted(la, key=lambda p: (la[p]["file"], la[p]["line"]))
    order_b = sorted(lb, key=lambda p: (lb[p]["file"], lb[p]["line"]))
    code_a = [la[p]["code"] or f"\0{i}" for i, p in enumerate(order_a)]  # no code: no match
    code_b = [lb[p]["code"] or f"\1{i}" for i, p in enumerate(order_b)]
    pairs = []
    matcher = difflib.SequenceMatcher(a=code_a, b=code_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs += [(order_a[i], order_b[j], "code") for i, j in zip(range(i1, i2),
                                                                       range(j1, j2))]
        else:
            pairs += _pair_unaligned(order_a[i1:i2], order_b[j1:j2], la, lb)
    return _versions_of_one(pairs, la, lb)


UNCERTAIN = ("edited", "assigned")


def _versions_of_one(pairs, la, lb):
    """``pairs``, without the uncertain ones where nothing says the runs are one program's
    versions: no pair is certain and the uncertain ones pair under half of the longer
    program's lines (a review: efficient.py's ``np.add(x, y, out=z)`` paired with another
    program's only line of the same operation, "136.951 µs -> 938.032 ms"; and, of the
    shorter's, two lines of a 3-line program paired with two of another's 7 by their
    operations alone, "2.4x faster" of two programs).  The guide's two versions of Example 1
    share no line of code, and pair 6 of their 8 and 9 lines."""
    certain = any(how and how not in UNCERTAIN for _, _, how in pairs)
    uncertain = sum(how in UNCERTAIN for _, _, how in pairs)
    if certain or 2 * uncertain >= max(len(la), len(lb)):
        return pairs
    out = []
    for pa, pb, how in pairs:
        out += [(pa, None, None), (None, pb, None)] if how in UNCERTAIN else [(pa, pb, how)]
    return out


def _pair_unaligned(rows_a, rows_b, la, lb):
    """Pairs among lines between the same two aligned lines of both runs (see above)."""
    pairs, left_b = [], list(rows_b)
    for pa in rows_a:
        ra = la[pa]

        def same_ops(pb):  # (lines that launched nothing: what they waited for)
            return (lb[pb]["operations"] == ra["operations"]
                    and lb[pb].get("waited_for", set()) == ra.get("waited_for", set()))
        if ra["code"]:
            match = next((pb for pb in left_b if lb[pb]["code"] and same_ops(pb)), None)
            how = "edited"
        else:
            match = next((pb for pb in left_b if not lb[pb]["code"] and same_ops(pb)
                          and (lb[pb]["file"], lb[pb]["line"]) == (ra["file"], ra["line"])),
                         None)
            how = "line"
        if match is None:
            pairs.append((pa, None, None))
        else:
            left_b.remove(match)
            pairs.append((pa, match, how))
    pairs = [_same_name(pair, left_b, la, lb) if pair[1] is None else pair for pair in pairs]
    return pairs + [(None, pb, None) for pb in left_b]


_ASSIGNED = re.compile(r"\s*([A-Za-z_]\w*)\s*(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)")


def assigned_name(code):
    """The name a line of code assigns ("x" of "x = np.random.random(N)"), or ""."""
    m = _ASSIGNED.match(code or "")
    return m.group(1) if m else ""


def _same_name(pair, left_b, la, lb):
    """A line left alone paired with one of B's left at its place that assigns the same name
    and launched some of the same operations ("assigned": uncertain, said): the guide's
    ``x = np.random.random(N).astype(np.float32)`` and ``x = rng.random(N, dtype=...)`` (a
    conversion removed) stood apart, "782 ms -> 0 ns" read as the whole line saved."""
    pa = pair[0]
    name = assigned_name(la[pa]["code"])
    match = next((pb for pb in left_b if name and assigned_name(lb[pb]["code"]) == name
                  and la[pa]["operations"] & lb[pb]["operations"]), None)
    if match is None:
        return pair
    left_b.remove(match)
    return pa, match, "assigned"


def wall_by_line(model):
    """(provenance or "(program start)" … -> wall-clock ns, explained ns, run ns, ns reached
    only through links inferred past events Legion does not record): each
    line's share of the run's time by its critical path (``critical_path.splits``: the path,
    the runtime starting up before it and shutting down after the program, runtime work
    charged to the line it led to), adding up to the run."""
    from legate_prof.analyze.critical_path import path_pieces, splits
    from legate_prof.query import as_source
    source = as_source(model)
    pieces = path_pieces(source)
    _, _, by_line = splits(pieces, source.provenances)
    resting = int(pieces.rows[0][pieces.resting_on_inference()].sum())
    return by_line, pieces.explained_ns, int(pieces.run[1] - pieces.run[0]), resting


def _line_rows(a, b, wall=None, same_files=False, code=(None, None), waits=None,
               sources=(None, None)):
    la, lb = per_line(a, code[0], sources[0]), per_line(b, code[1], sources[1])
    unlined = (la.pop(NO_LINE), lb.pop(NO_LINE))
    wa, wb = wall or ({}, {})
    waits = waits or ({}, {})
    for lines, model, w, held, text in ((la, a, wa, waits[0], code[0]),
                                        (lb, b, wb, waits[1], code[1])):
        _lines_without_tasks(lines, model, w, held, text)
    rows = []
    for pa, pb, how in pair_lines(la, lb):
        if same_files and how == "line":  # (one program's files: its lines are its lines)
            how = "same files"
        ra, rb = la.get(pa, {}), lb.get(pb, {})
        sites = [f"{r['file']}:{r['line']}" for r in (ra, rb) if r]
        row = {"line": sites[0] if len(set(sites)) == 1 else " ~ ".join(sites),
               "a": f"{ra['file']}:{ra['line']}" if ra else None,
               "b": f"{rb['file']}:{rb['line']}" if rb else None,
               "operations": sorted(ra.get("operations", set()) | rb.get("operations", set())),
               "code": [ra.get("code", ""), rb.get("code", "")], "paired_by": how}
        for f in FIELDS:
            row[f] = [ra.get(f, 0), rb.get(f, 0)]
        row["wall_ns"] = [int(wa.get(pa, 0)), int(wb.get(pb, 0))]
        for f in WAIT_FIELDS:  # (the program's waits for values there, counted once a run)
            row[f] = [int(waits[0].get(pa, {}).get(f, 0)), int(waits[1].get(pb, {}).get(f, 0))]
        rows.append(row)
    # (the run's own rows; "(unknown)": where its path stops at what no profile records)
    for name in (PROGRAM_START_TITLE, SHUTDOWN_TITLE, UNKNOWN_TITLE, NO_LINE):
        work = unlined if name == NO_LINE else ({}, {})
        if wa.get(name) or wb.get(name) or any(any(w.values()) for w in work):
            rows.append({"line": name, "a": name, "b": name, "operations": [],
                         "code": ["", ""], "paired_by": "run",
                         **{f: [0, 0] for f in WAIT_FIELDS},
                         **{f: [work[0].get(f, 0), work[1].get(f, 0)] for f in FIELDS},
                         "wall_ns": [int(wa.get(name, 0)), int(wb.get(name, 0))]})
    # (a change alike, the bigger line first: a run against itself was in task time's order)
    rows.sort(key=lambda r: (-abs(r["wall_ns"][0] - r["wall_ns"][1]), -max(r["wall_ns"]),
                             -max(r["task_ns"])))
    return rows


def _lines_without_tasks(lines, model, wall, waits, code):
    """Add to ``lines`` (``per_line``) the lines that launched nothing yet waited for a value
    (``waits``: ``waits_by_text``; a final ``print(x)``), with their code (the run's, else
    ``code``) and what they waited for, so they pair as a line that launched tasks does (a
    self-compare read such a line "~", by its number alone, or left it out: off the path);
    and the lines the path charges that made no task and waited for nothing (no code: they
    pair by file name and line number; those the run's stream records operations of are
    ``per_line``'s)."""
    code = code or {}
    for text in list(waits) + list(wall):
        if text.startswith("(") or text in lines:
            continue
        file, line = _site(text)
        said = (model.line_text.get(text) or code.get(text, "")) if text in waits else ""
        lines[text] = {"file": file, "line": line, "operations": set(), "code": said,
                       **{f: 0 for f in FIELDS}}
    for text, x in waits.items():  # (what a line that launched nothing waited for pairs it)
        lines[text]["waited_for"] = set(x["for"]) if not lines[text]["operations"] else set()


def waits_by_text(source):
    """{provenance: {"waits", "waited_ns", "for"}} of the program's waits for values
    (``program_waits.waits_by_line``: counted once a run), by the line's text."""
    from legate_prof.analyze.program_waits import waits_by_line
    return {source.provenances[p]: x for p, x in waits_by_line(source).items()}


def _none_paired(lines, pathless=()):
    """[the note] where lines exist and none paired: a run without source lines (one with no
    critical path, ``pathless``, has its time all under "(unknown)"), or two programs
    (every finding then reads "fixed" or "new", the run "faster"); else []."""
    in_a, in_b = any(r["a"] for r in lines), any(r["b"] for r in lines)
    if any(r["paired_by"] for r in lines) or not (in_a or in_b):
        return []
    if not (in_a and in_b):
        run = "B" if in_a else "A"
        return [f"run {run} has no critical path (no Legion timeline: a run that crashed?): "
                "its time is all under '(unknown)', and no line is compared"
                if run in pathless else
                f"run {run} names no source line (its .runtime.prof files not given?): no "
                "line is compared"]
    return ["no line of A pairs with a line of B: two different programs? No line is "
            "compared, and a finding \"fixed\" or \"new\" is one program's and not the "
            "other's"]


def _notes(rows, pathless=()):
    """What a reader must know about the pairing: no line paired at all (two programs), lines
    in one run only, lines at the same place whose operations changed, pairs made without
    the code."""
    def ops(r):
        return ", ".join(r["operations"]) or "no task"
    none = _none_paired([r for r in rows if r["paired_by"] != "run"], pathless)
    a_only = {r["a"]: r for r in rows if r["paired_by"] is None and r["a"]}
    b_only = {r["b"]: r for r in rows if r["paired_by"] is None and r["b"]}
    notes = none + [f"{site}: launched {ops(a_only[site])} in A and {ops(b_only[site])} in "
                    "B: an edited line, not compared"
                    for site in sorted(a_only.keys() & b_only.keys())]
    notes += [f"{site}: in A only" for site in a_only if site not in b_only]
    notes += [f"{site}: in B only" for site in b_only if site not in a_only]
    notes += [f"{r['line']}: paired by file name and line number (the line's code was not "
              "recorded): check that it is the same line" for r in rows
              if r["paired_by"] == "line"]
    notes += [f"{r['line']}: the code changed ({r['code'][0]!r} -> {r['code'][1]!r}); paired "
              "as the line at its place that launched the same operations" for r in rows
              if r["paired_by"] == "edited"]
    notes += [f"{r['line']}: the code changed ({r['code'][0]!r} -> {r['code'][1]!r}); paired "
              f"as the line at its place that assigns {assigned_name(r['code'][0])} and "
              "launched some of the same operations" for r in rows
              if r["paired_by"] == "assigned"]
    return notes


# the lane groups of the array runtime's stream: every rank's repeats the program's operations
# and arrays, counted once (``run_counts``)
STREAM_GROUPS = ("ops", "arrays")


def per_group(model, source):
    """group -> {items, busy_ns, lanes, peak_bytes} over all ranks (``busy_ns`` summed over
    the group's lanes: its share of the run is busy / (lanes × run); ``peak_bytes`` the most
    in use at once over all ranks, not the largest rank's: a review read mpi2 -> mpi4's
    arrays as 30.5 -> 5.7 MiB, where the runs held 61.0 -> 22.9 MiB); the items of the
    stream's groups in the rank that counts the program only (``run_counts.counting_rank``:
    4 ranks made `compare` say 8,872 arrays where `stats` says 2,218).  Their busy time is
    each rank's (an operation is busy while its tasks run on that rank).  ``source``: the
    model's, as ``compare`` holds it (its steps of all ranks made once)."""
    from legate_prof.analyze.run_counts import counting_rank, stream_counts
    it = model.items
    out = {}
    items = np.bincount(it["lane"], minlength=model.n_lanes)
    counting = counting_rank(stream_counts(model))
    for (rank, group), v in model.busy_ns.items():
        row = out.setdefault(group, {"items": 0, "busy_ns": 0, "lanes": 0, "peak_bytes": 0})
        row["busy_ns"] += int(v)
        lanes = model.lanes_of(group, rank)
        row["lanes"] += int(len(lanes))
        if group not in STREAM_GROUPS or counting is None or rank == counting:
            row["items"] += int(items[lanes].sum())
    for group in set(out) & set(MEMORY_GROUPS):  # (the run's: all ranks' use at once)
        use = source.memory_use(group, None)
        out[group]["peak_bytes"] = int(use[1]) if use else 0
    return out


def compare(a, b, same_files=False, code=(None, None)):
    """{"lines": [...], "groups": [...], "span_ns": [A, B], "explained_ns": [A, B],
    "notes": [...]}: each line with its runs' figures [A, B] — its wall-clock share of the
    run (``wall_ns``) first, by how much it changed — its operations and how it was paired;
    each lane group with its busy time and the share of its lanes' time that is.
    ``same_files``: A and B are the same files, so lines at the same place are the same line
    even where their code was not recorded; ``code``: each run's lines' code where the run
    did not record it ({provenance: code}, ``load.source_code``), so they pair on it."""
    from legate_prof.query import as_source
    sa, sb = as_source(a), as_source(b)  # (one critical path each: the lines and findings)
    (wa, ea, ra, ia), (wb, eb, rb, ib) = wall_by_line(sa), wall_by_line(sb)
    # (a run with no critical path, a crash's stream alone, names no line: said so, unpaired)
    lines = _line_rows(a, b, (wa, wb), same_files, code, (waits_by_text(sa), waits_by_text(sb)),
                       [s if e or not r else None for s, e, r in ((sa, ea, ra), (sb, eb, rb))])
    ga, gb = per_group(a, sa), per_group(b, sb)
    spans = [int(m.items["stop"].max() - m.items["start"].min()) if m.n_items else 0
             for m in (a, b)]  # first item to last, as `stats` counts a run's span
    groups = []
    for key in sorted(set(ga) | set(gb)):
        row = {"group": key}
        for f in ("items", "busy_ns", "lanes", "peak_bytes"):
            row[f] = [ga.get(key, {}).get(f, 0), gb.get(key, {}).get(f, 0)]
        row["busy_share"] = [round(busy / (lanes * span), 4) if lanes and span else 0.0
                             for busy, lanes, span in zip(row["busy_ns"], row["lanes"], spans)]
        groups.append(row)
    unpaired = _none_paired([r for r in lines if r["paired_by"] != "run"])
    return {"lines": lines, "groups": groups, "span_ns": spans, "explained_ns": [ea, eb],
            "run_ns": [ra, rb], "inferred_ns": [ia, ib],
            "notes": _notes(lines, _pathless({"span_ns": spans, "run_ns": [ra, rb],
                                               "explained_ns": [ea, eb]})),
            # (False: both name lines and none pairs, two programs: no verdict is drawn)
            "same_program": not (unpaired and unpaired[0].startswith("no line of A")),
            "findings": findings_compared(sa, sb), "ranks": [_ranks(a), _ranks(b)],
            "waits_recorded": [_waits_recorded(sa), _waits_recorded(sb)],
            "clocks_apart_ns": [_clocks_apart(sa), _clocks_apart(sb)]}


def _waits_recorded(source):
    """Whether the run's streams record the program's waits for values (``waits_recorded``):
    where one run's do and the other's do not, the other's waits are unknown, not none."""
    from legate_prof.analyze.program_waits import waits_recorded
    return waits_recorded(source)


def _clocks_apart(source):
    """How far apart the run's ranks' clocks read where that, not its messages, makes their
    latencies (``MessageLatency.clocks_make_latencies``), else 0: its run length then measures
    the clocks too (a review read "4.567 s -> 103.977 s (22.8x slower)" of mpi2 and itself
    with a rank's clock shifted by 100 s)."""
    return source.message_latency().clocks_offset_ns


def _ranks(model):
    """How many ranks a run has (its machine description's, else its lanes')."""
    if model.ranks:
        return len(model.ranks)
    return len(unique_values(np.asarray(model.lanes["rank"]))) if len(model.lanes["rank"]) else 0


# patterns counted from the runtime's stream (a guess from Legion's records without it): a
# run without its stream cannot say they are gone (a review read "temporaries ... fixed"
# where run B was given without its stream, and had the finding with it); each with what
# ``insights_of_run`` says of a run that can tell it: "blocking" needs streams that record
# the program's waits (one written before they were recorded holds none)
FROM_THE_STREAM = {"temporaries": "streams", "blocking": "waits_recorded"}


def findings_compared(a, b):
    """Each of ``insights``' patterns found in either run: its wall-clock time on each run's
    critical path ([A, B]; None: not found there) — ``wall_ns`` its share counted once,
    ``path_ns`` all its work holds there (what the text compares) — and its first title in
    each: what the change fixed (found in A only), what it brought (in B only), what is
    left.  Largest in A first.  ``unknown``: a run where its cost cannot be measured (the ranks' clocks apart:
    ``message_latency``); ``not_judged``: a run that cannot tell it, not given its runtime
    stream where the other was (``FROM_THE_STREAM``)."""
    from legate_prof.analyze.insights import insights_of_run
    runs = [insights_of_run(x) for x in (a, b)]
    out = {}
    for k, run in enumerate(runs):
        for f in run["findings"]:
            row = out.setdefault(f["pattern"], {"pattern": f["pattern"], "wall_ns": [None, None],
                                                "path_ns": [None, None],
                                                "title": [None, None], "unknown": [False, False],
                                                "not_judged": [False, False],
                                                "no_path": [False, False]})
            row["wall_ns"][k] = (row["wall_ns"][k] or 0) + int(f["wall_ns"])
            row["path_ns"][k] = (row["path_ns"][k] or 0) + int(f.get("path_ns", f["wall_ns"]))
            row["title"][k] = row["title"][k] or f["title"]
            row["unknown"][k] |= "clocks_apart_ns" in f["evidence"]
            row["no_path"][k] |= bool(f.get("no_path"))  # (the run has no critical path)
    # (a run with no critical path — no Legion timeline: a crash — cannot tell the findings
    # read off it: "message_latency ... not found  fixed" of mpi2 against a crashed run, a
    # review)
    pathless = [not run.get("explained_ns", 1) and bool(run.get("run_ns")) for run in runs]
    for row in out.values():
        tells = [run.get(FROM_THE_STREAM.get(row["pattern"], ""), True) for run in runs]
        for k in (0, 1):
            row["not_judged"][k] = row["wall_ns"][k] is None and (
                pathless[k] or (not tells[k] and tells[1 - k]))
            if row["not_judged"][k]:  # (why: no stream, or one of before waits were recorded)
                row.setdefault("not_judged_why", [None, None])[k] = (
                    "no critical path" if pathless[k] else
                    "records no waits for values" if runs[k].get("streams", True)
                    else "not given")
    return sorted(out.values(), key=lambda r: (-(r["path_ns"][0] or -1), -(r["path_ns"][1] or 0),
                                               r["pattern"]))


def _change(x, y, fmt=str):
    if x == y:
        return f"{fmt(x)}"
    return f"{fmt(x)} -> {fmt(y)}"


def _pathless(c):
    """The runs ("A", "B") with no critical path: a crash's stream alone, its length not the
    program's (a review read oom2 against efficient.py "1.8x slower", its 419 ms all "(no
    line)")."""
    ra, rb = c.get("run_ns", c["span_ns"])
    return [n for n, x, r in zip("AB", c.get("explained_ns", [1, 1]), (ra, rb)) if not x and r]


def _verdict(c, one):
    """" (1.2x faster)", or why there is none (two programs: nothing; clocks apart; a run
    without a critical path), after the run lengths."""
    a_ns, b_ns = c["span_ns"]
    apart = c.get("clocks_apart_ns", [0, 0])
    skewed = [f"{n}'s ranks' clocks read {format_ns(x)} apart" for n, x in zip("AB", apart) if x]
    pathless = _pathless(c)
    # (clocks apart by less than the runs differ cannot make the difference: 58.7 ms apart
    # refused a verdict on 370 s against 5.6 s, a review)
    within = skewed and abs(a_ns - b_ns) > sum(apart)
    verdict = (f"{a_ns / b_ns:.1f}x faster" if b_ns and a_ns > b_ns else
               f"{b_ns / a_ns:.1f}x slower" if a_ns and b_ns > a_ns else "")
    return ("" if not one else
            f" (no verdict: {' and '.join(pathless)} {'has' if len(pathless) == 1 else 'have'}"
            " no critical path: no Legion timeline, a run that crashed?)" if pathless else
            f" ({verdict}; {' and '.join(skewed)}: less than the runs differ)"
            if within and verdict else
            f" (no verdict: {' and '.join(skewed)}, so its length measures them too)"
            if skewed else f" ({verdict})" if verdict else "")


def _start_up_words(c):
    """Where most of the runs' difference is the program's start (the runtime starting and
    the program before its first operation: the machine's, not the code's), a line saying
    so and what is left without it (mpi2 against mpi2_utility2 read "2.6x faster", 2.2 s of
    its 2.8 s the start: a review) — where the runs are judged at all (no ratio after "no
    verdict": a review) — or that it moved by more than the whole run did (the rest then
    went the other way: "1.577 s of 502.380 ms" read as a part of it, a review)."""
    start = next((r["wall_ns"] for r in c.get("lines", ())
                  if r.get("line") == PROGRAM_START_TITLE), None)
    ra, rb = c.get("run_ns", c["span_ns"])
    if not start or None in start or not ra or not rb or _pathless(c) \
            or any(c.get("clocks_apart_ns", [0, 0])):
        return []
    moved, whole = start[0] - start[1], ra - rb
    if not whole or moved * whole <= 0 or 2 * abs(moved) <= abs(whole):
        return []
    a, b = ra - start[0], rb - start[1]
    verdict = (f" ({a / b:.1f}x faster)" if b > 0 and a > b else
               f" ({b / a:.1f}x slower)" if a > 0 and b > a else "")
    what = (f"the program's start ({format_ns(start[0])} -> {format_ns(start[1])}: the "
            "runtime starting and the program before its first operation, the machine's more "
            "than the code's)")
    said = (f"most of it, {format_ns(abs(moved))} of {format_ns(abs(whole))}, is {what}"
            if abs(moved) <= abs(whole) else
            f"{what} moved by more than the run did ({format_ns(abs(moved))} against "
            f"{format_ns(abs(whole))}): the rest went the other way")
    return [f"  {said}; without it: {format_ns(a)} -> {format_ns(b)}{verdict}"]


def format_compare(c, names=("A", "B")):
    ra, rb = c.get("run_ns", c["span_ns"])
    one = c.get("same_program", True)  # (two programs: their figures, no verdict)
    faster = _verdict(c, one)
    out = [f"A = {names[0]}", f"B = {names[1]}"]
    if not one:
        out.append("two different programs? No line of A pairs with a line of B: the runs' "
                   "figures are shown side by side, not judged against each other")
    out.append(f"run length: {_change(*c['span_ns'], fmt=format_ns)}{faster}")
    if one:
        out += _start_up_words(c)
    ranks = c.get("ranks", [0, 0])
    if ranks[0] != ranks[1] and all(ranks):  # (a user compared 1 rank against 4: say so)
        out.append(f"ranks: {ranks[0]} -> {ranks[1]}: the runs ran on different numbers of "
                   "ranks; their lines and groups compare whole runs, not rank for rank")
    if "explained_ns" in c:
        said = [f"{_explained(x, r)} of {n} explained" if x or not r else
                f"{n} has no critical path, its {format_ns(r)} all under '(unknown)'"
                for n, x, r in zip("AB", c["explained_ns"], (ra, rb))]
        out.append("wall clock: each line's share of its run's critical path, with the runtime "
                   "work it led to, the start-up and the shutdown (they add up to the run: "
                   f"{', '.join(said)})")
        inf = c.get("inferred_ns", [0, 0])
        if any(inf):
            out.append(f"  of which reached only through links inferred past events Legion "
                       f"does not record: {_explained(inf[0], ra)} of A, "
                       f"{_explained(inf[1], rb)} of B ({INFERRED_WORDS})")
    out += _lines_table(c["lines"], c.get("waits_recorded", [True, True]))
    if one:
        out += _slower_lines(c["lines"], c.get("run_ns", c["span_ns"]))
    out += ["", f"{'lane group':<22}{'items':>18}{'busy (of its lanes: A, B)':>44}"
            f"{'peak memory':>24}"]
    for r in c["groups"]:
        peak = _change(*r["peak_bytes"], fmt=format_bytes) if any(r["peak_bytes"]) else ""
        busy = "" if r["group"] in MEMORY_GROUPS else (
            f"{_change(*r['busy_ns'], fmt=format_ns)} "
            f"({' -> '.join(f'{100 * x:.1f} %' for x in r.get('busy_share', [0, 0]))})")
        out.append(f"{GROUP_TITLE.get(r['group'], r['group']):<22}{_change(*r['items']):>18}"
                   f"{busy:>44}{peak:>24}")
    if any(r["group"] in STREAM_GROUPS for r in c["groups"]):
        out.append("  (" + ", ".join(GROUP_TITLE[g] for g in STREAM_GROUPS) + " items: the "
                   "runtime event stream's, each once: every rank's stream repeats them; "
                   "their busy time each rank's, while an operation's tasks ran there)")
    out += _findings_lines(c.get("findings"), one)
    if c.get("notes"):
        out += ["", "Pairing of lines (~: an uncertain pair):"] + [f"  {n}" for n in c["notes"]]
    return "\n".join(out)


def _slower_lines(lines, runs):
    """A line naming the program's lines in both runs whose wall clock grew by 1 % of A's run
    or more (the guide's fix made its first line slower, 743 ms -> 1.666 s, and nothing in
    the table said so: a review)."""
    least = 0.01 * (runs[0] or 0)
    slower = [r for r in lines if r.get("a") and r.get("b") and not r["a"].startswith("(")
              and r["wall_ns"][1] - r["wall_ns"][0] >= max(least, 1)]
    if not slower:
        return []
    said = ", ".join(f"{r['b']} +{format_ns(r['wall_ns'][1] - r['wall_ns'][0])}"
                     for r in sorted(slower, key=lambda r: r["wall_ns"][0] - r["wall_ns"][1]))
    return [f"  slower in B (by 1 % of A's run or more): {said}"]


def _lines_table(lines, recorded=(True, True)):
    """The table of lines (A -> B); a column of the program's waits for values at each line
    where either run waited (a line that launched nothing, a final ``print(x)``, shows its
    waiting there: "-" where neither waited; "?" for a run whose streams do not record them,
    ``recorded``, where the other's do)."""
    waited = any(any(r.get("waits", [0, 0])) for r in lines)
    unknown = [not recorded[k] and recorded[1 - k] for k in (0, 1)]
    out = ["", "Lines, the largest change in wall clock first (A -> B):",
           f"{'line in A':<20}{'line in B':<20}{'wall clock':>26}"
           + (f"  {'waited for values':>24}" if waited else "")
           + f"    {'operations':<17}  {'tasks':>14}  {'task time':>24}  {'copies':>12}"
           f"  {'bytes':>20}  {'fills':>12}"]
    for r in lines:  # (two spaces between columns: a wide value never runs into the next)
        ops = _cut(", ".join(r["operations"]) or "-", 17)
        mark = "~" if r["paired_by"] in ("edited", "line", "assigned") else ""
        wall = _change(*r.get("wall_ns", [0, 0]), fmt=format_ns)
        waits = r.get("waited_ns", [0, 0])
        wait = (_change(*waits, fmt=format_ns) if any(r.get("waits", [0, 0])) else "-")
        if any(unknown) and wait != "-":
            wait = " -> ".join("?" if unknown[k] and not waits[k] else format_ns(waits[k])
                               for k in (0, 1))
        out.append(f"{(r['a'] or '-')[:19]:<20}{((r['b'] or '-') + mark)[:19]:<20}"
                   f"{wall:>26}" + (f"  {wait:>24}" if waited else "")
                   + f"    {ops:<17}  {_change(*r['tasks']):>14}"
                   f"  {_change(*r['task_ns'], fmt=format_ns):>24}"
                   f"  {_change(*r['copies']):>12}"
                   f"  {_change(*r['copy_bytes'], fmt=format_bytes):>20}"
                   f"  {_change(*r['fills']):>12}")
    if waited and any(unknown):
        out.append(f"  (?: run {'A' if unknown[0] else 'B'}'s runtime streams record no waits "
                   "for values: written before legate_prof recorded them, or not given)")
    return out


def _findings_lines(findings, one):
    """The findings' time on the path in A and B, and what the change did to each (``one``: the
    same program; else only where each was found)."""
    if not findings:
        return []
    out = ["", "Findings (`legate_prof insights`), the time each one's work holds on each "
               "run's critical path (A -> B; a piece two findings hold counts for both here; "
               "'own': the part counted for it alone, insights' cost of it):"]
    for r in findings:
        out.append(_finding_line(r, one))
    return out


# findings no change of the code fixes or brings: what they cost moves with the machine and
# with what ran first, not with the program (insights: "Not a slow line")
ONCE_A_RUN = ("warm_up",)


def _finding_line(r, one):
    """A finding's line of the comparison: its time on the path in A and B and what changed; a
    run that cannot tell (``not_judged``) or whose cost is unknown (``unknown``) is said to
    be so, and no verdict is drawn from it."""
    # (its work's whole time on the path, not its share counted once: message_latency read
    # "109.798 ms -> 803.956 ms worse" where A's path waited 70 s on messages, most of it
    # counted under tiny_tasks — a review)
    wa, wb = r.get("path_ns", r["wall_ns"])
    own = r["wall_ns"]
    unknown, not_judged = r.get("unknown", [False] * 2), r.get("not_judged", [False] * 2)
    no_path = r.get("no_path", [False] * 2)

    def shown(k, w):
        # (its own share where less: insights' cost of it; 165.526 s here beside insights'
        # 2.427 s for one finding read as two costs of one thing, a review)
        mine = (f" (own {format_ns(own[k])})" if own[k] is not None and w is not None
                and own[k] < w else "")
        return ("not judged" if not_judged[k] else "not found" if w is None else
                "unknown" if unknown[k] or no_path[k] else format_ns(w) + mine)
    told = [name for k, name in enumerate(("A", "B")) if not_judged[k]]
    if told:
        why = r.get("not_judged_why", [None, None])[0 if told[0] == "A" else 1]
        said = (f"{told[0]} has no critical path (no Legion timeline: a run that crashed?): "
                "it cannot tell" if why == "no critical path" else
                f"{told[0]}'s runtime stream {why or 'not given'}: it cannot tell"
                if why != "records no waits for values" else
                f"{told[0]}'s runtime streams record no waits for values (written before "
                "legate_prof recorded them, or a rank's not given): it cannot tell")
    elif any(no_path):  # (a crash's stream alone: "in both, off the critical path" said)
        said = (f"its cost unknown: {' and '.join(n for n, x in zip('AB', no_path) if x)} "
                f"{'has' if sum(no_path) == 1 else 'have'} no critical path")
    elif any(unknown):
        said = "its cost unknown where the ranks' clocks read apart"
    elif r["pattern"] in ONCE_A_RUN and one:  # (a review read "warm_up ... fixed")
        said = "start-up, paid once a run: no change of the code's"
    else:
        said = (("A only" if wb is None else "B only" if wa is None else "") if not one
                else "fixed" if wb is None else "new" if wa is None else
                "worse" if wb > wa else "less" if wb < wa else
                # (found in both, off the path in both: "0 ns -> 0 ns" said nothing)
                "in both, off the critical path" if wa == 0 else "the same")
    both = f"{shown(0, wa)} -> {shown(1, wb)}"
    return f"  {r['pattern']:<20}{both:>34}  {said}".rstrip()


def _cut(text, width):
    """``text`` in ``width`` characters, '…' where cut."""
    return text if len(text) <= width else text[:width - 1] + "…"


def _explained(part, whole):
    return f"{100.0 * part / whole:.1f} %" if whole else "-"
