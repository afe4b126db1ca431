"""The text form of ``legate_prof critical``: where the path lies in the run, its splits,
and the path from the item that ended last back (steps of no time folded into one line)."""

from __future__ import annotations

import re

from legate_prof.analyze.path_lines import PROGRAM_START_TITLE, TOP_LEVEL_NAMES
from legate_prof.model.kinds import GROUP_TITLE
from legate_prof.present.colors import PATH_KIND_MEANING
from legate_prof.present.units import format_ns

SPLIT_ROWS = 15  # rows of each split shown
LANE_WIDTH = 60  # the lane column grows to the longest lane shown, up to this
ITEM_WIDTH = 44
_LANE_ID = re.compile(r"\(0x[0-9a-fA-F]{1,16}\)")


def plural(n, word):
    """'1 item', '40,848 items'."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def cut_middle(text, width):
    """``text`` in at most ``width`` characters, its middle left out ("…") where longer."""
    if len(text) <= width:
        return text
    head = width // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def _pct(part, whole):
    return f"{100.0 * part / whole:5.1f}%" if whole else "    -"


# what an inferred link is, where a text first names one (a user's review: the words
# "inferred past events Legion does not record" alone, for 81 % of a path, said not how far
# to trust it; and docs/ is not in a pip install)
# The rule's agreement is measured where Legion records the link (hidden, then inferred:
# docs/critical_path.md, "How often the rule is right"); a review still read 98 % of a path
# through inferred links as a number it could not weigh.
INFERRED_WORDS = ("each linked by the items' timing where Legion recorded no event; the same "
                  "rule, tried on the links Legion does record, names Legion's own for 91-97 % "
                  "of them: what rests on them is an estimate")


# the kinds of the path's time said under "By kind": the program's thread's, and an item's
# not running (``critical_path.NOT_RUNNING``; a review read loops3's 36 % "launch" as Python
# running, 1.5 s of it waits inside runtime calls)
KIND_LEGEND = {
    "launch": "the program's own thread running: Python, or a runtime call it made, with the "
              "waits inside that call (counted in the call, as the reference counts them)",
    "waiting": PATH_KIND_MEANING["waiting"], "blocked": PATH_KIND_MEANING["blocked"],
    # (a fifth to 45 % of real multi-rank runs, said nowhere in the text: a review)
    "gap": PATH_KIND_MEANING["gap"], "unknown": PATH_KIND_MEANING["unknown"]}


def format_critical_path(report, limit=40, window=False) -> str:
    """The text form: where the path lies, the splits, then the path from the item that ended
    last back (``limit`` rows of it; 0: all)."""
    lines = header(report, window)
    span = report.get("run_ns") or report["span_ns"]  # (the shares add up to the run)
    groups = {GROUP_TITLE.get(k, k): v for k, v in report["by_group"].items()}
    for title, table in (("By kind", report["by_kind"]), ("By lane group", groups),
                         ("By source line", report["by_provenance"])):
        rows = [(k, v) for k, v in table.items() if v]
        if not rows:
            continue
        lines.append(title)
        startup = report["by_kind"].get("startup", 0)
        for k, v in rows[:SPLIT_ROWS]:
            # (its share is more than the start-up's: what ran before the first line says)
            why = ((f"  (the runtime starting {format_ns(startup)}, then the program "
                    f"until its first operation {format_ns(v - startup)})"
                    if report.get("operations_recorded", True) else
                    # (no stream: "until its first operation 229.572 ms" of a program that
                    # launched at 58 ms, the runtime mapping meanwhile, a review)
                    f"  (the runtime starting {format_ns(startup)}, then "
                    f"{format_ns(v - startup)} until the first item Legion made of the "
                    "program's work: without the runtime's stream, when the program made "
                    "its first operation is not recorded)")
                   if k == PROGRAM_START_TITLE and 0 < startup < v else "")
            lines.append(f"  {_pct(v, span)} {format_ns(v):>12}  {k}{why}")
        if len(rows) > SPLIT_ROWS:
            rest = sum(v for _, v in rows[SPLIT_ROWS:])
            lines.append(f"  {_pct(rest, span)} {format_ns(rest):>12}  "
                         f"({plural(len(rows) - SPLIT_ROWS, 'more row')}: --json has all)")
        if title == "By kind":
            lines += [f"  ({k}: {KIND_LEGEND[k]})" for k, _ in rows if k in KIND_LEGEND]
        lines.append("")
    if report["path"]:
        lines += listing(report["path"], limit)
        lines += largest(report["path"], span, limit)
    return "\n".join(lines)


LARGEST_ROWS = 10  # the path's steps that hold the most of it, after the listing


def largest(path, span, limit):
    """The steps that hold the most of the path, largest first, where the listing above
    does not show every step (a review of the guide's run: its last 40 steps, microseconds
    each, did not say where 182 s went)."""
    if not limit or len(path) <= limit:
        return []
    held = sorted((p for p in path if _length(p) > 0), key=lambda p: -_length(p))
    if not held:
        return []
    top = held[:LARGEST_ROWS]
    lane_w = _lane_width(top)
    most = sum(_length(p) for p in top)
    out = ["", f"Largest steps: {len(top)} of {len(path):,} hold {format_ns(most)} "
               f"({_pct(most, span).strip()} of the run; where the path's time is spread "
               "over many steps, the source lines above say where it went; --json has all)",
           f"  {'holds':>12}  {'share':>6}  {'from':>12}  {'item':<{ITEM_WIDTH}}"
           f"{'lane':<{lane_w}}via"]
    for x in top:
        out.append(f"  {format_ns(_length(x)):>12}  {_pct(_length(x), span):>6}  "
                   f"{format_ns(x['on_path_ns'][0]):>12}  "
                   f"{cut_middle(_label(x), ITEM_WIDTH - 1):<{ITEM_WIDTH}}"
                   f"{cut_middle(_lane(x), lane_w - 1):<{lane_w}}{x['via']}")
    return out


def _lane_width(steps):
    """The lane column's width for ``steps``: their longest lane, within ``LANE_WIDTH``."""
    return min(max([len(_lane(p)) for p in steps] + [4]) + 2, LANE_WIDTH)


def _label(x):
    """A step's item as the listings name it: its name and its line's file and number."""
    return x["name"] + (f" [{x['provenance'].rsplit('/', 1)[-1]}]" if x["provenance"] else "")


WINDOW_LINE = "(The run's critical path, cut to the window.)"  # (a window's first line)


def header(report, window=False):
    """Where the path lies in the run (``window``: in the window ``--start/--stop`` cut the
    profile to), and where it stops when that is an unknown event."""
    whole = "window" if window else "run"
    path, span = report["path"], report["span_ns"]
    if not path:
        return missed_lines(report.get("run_path_where")) + [""]
    start = report.get("path_start_ns", 0)
    end = start + span
    first = path[-1]
    since = (f"the top-level task's start ({format_ns(start)})"
             if first["name"] in TOP_LEVEL_NAMES and first["via"] != "unknown"
             and first["start_ns"] == start
             else f"{first['name']} at {format_ns(start)}")
    run0, run1 = report.get("run_span_ns", [start, end])
    if window and start <= run0:  # (the items were cut to the window: its start, not theirs)
        since = f"the window's start ({format_ns(start)})"
    until = (f"the {whole}'s end ({format_ns(end)})" if end >= run1
             else format_ns(end))
    out = [f"Critical path: {plural(report.get('steps', len(path)), 'item')} over "
           f"{format_ns(span)}, from "
           f"{since} to {until} (walked back from the item that ended last)"]
    out.append(explained_line(report, whole))
    if report.get("shutdown"):
        out.append(shutdown_line(report["shutdown"]))
    stop = report.get("stops_at")
    if stop:
        out.append(stops_line(stop, window))
    return out + [""]


def missed_lines(where):
    """Why a window (or a run) has no critical path: the run's path lies outside the window
    (``where``: ``critical_path._run_path_where``; and where it stops), or there is none."""
    if not where:
        return ["Critical path: none (no item to walk back from)"]
    a, b = where["run_path_ns"]
    out = [f"Critical path: none in the window: the run's path (of the ranks read) lies from "
           f"{format_ns(a)} to {format_ns(b)}"]
    if where.get("stops_at"):
        out.append(stops_line(where["stops_at"]))
    return out


def explained_line(report, whole="run"):
    """How much of the run the shares below give a cause, of what: the runtime starting
    up, the path, the shutdown, and how many of the path's links are inferred."""
    run = report.get("run_ns") or report["span_ns"]
    explained = report.get("explained_ns", report["span_ns"])
    k = report.get("by_kind", {})
    parts = [f"{format_ns(k[c])} {w}" for c, w in
             (("startup", "the runtime starting before the program (counted in '(program "
                          "start)' below)"),
              ("shutdown", "the runtime shutting down after it")) if k.get(c)]
    unknown = k.get("unknown", 0)
    inf = report.get("inferred") or {}
    inferred = inf.get("links", 0)
    # (where time before the path is unknown, not everything before the inferred links'
    # last rests on them: the path's part does — a --ranks run whose path stops at a rank
    # not given read "32.731 ms of it, everything before 168.765 s")
    guess = (f"; {format_ns(inf.get('resting_ns', 0))} "
             f"({_pct(inf.get('resting_ns', 0), run).strip()}) of it, "
             f"{'the path before' if unknown else 'everything before'} "
             f"{format_ns(inf['from_ns'])}, is reached through "
             f"{plural(inferred, 'link')} inferred past events Legion does not record "
             f"(marked 'inferred': {INFERRED_WORDS})"
             if inferred and inf.get("from_ns") is not None else "")
    return (f"The shares below explain {format_ns(explained)} of the {whole}'s "
            f"{format_ns(run)} ({_pct(explained, run).strip()})"
            + (f", {', '.join(parts)}" if parts else "") + guess
            + (f"; the other {format_ns(unknown)} is unknown" if unknown else "") + ".")


def shutdown_line(tail):
    """What the runtime did after the program's top-level task ended (in a window after
    that: what it did in the window)."""
    ended = tail.get("ended_ns", tail["start_ns"])
    when = (f"after the program's top-level task ended ({format_ns(ended)})"
            if ended >= tail["start_ns"] else
            f"the program's top-level task ended at {format_ns(ended)}, before the "
            "window; in it")
    if not tail["items"]:
        return (f"Shutdown: {when}, {format_ns(tail['ns'])} to the "
                f"{'run' if ended >= tail['start_ns'] else 'window'}'s end: nothing else ran.")
    work = ", ".join(f"{w['count']:,} {w['name']}" for w in tail["work"][:3])
    lines = [_short_site(x) for x in tail.get("lines", {})]
    of = (f" What it released was made by {', '.join(lines[:3])}"
          f"{' …' if len(lines) > 3 else ''} ({sum(tail['lines'].values()):,} of its items "
          "and of the instances it deleted name those lines)." if lines else "")
    return (f"Shutdown: {when}, the runtime spent "
            f"{format_ns(tail['ns'])} cleaning up: {plural(tail['items'], 'item')} "
            f"ran ({work}{', …' if len(tail['work']) > 3 else ''}), "
            f"{format_ns(tail['busy_ns'])} of processor time in all.{of}")


def _short_site(prov):
    """'/a/b/prog.py:21' -> 'prog.py:21' (the line, not where the file lay)."""
    path, _, line = prov.rpartition(":")
    return f"{path.rsplit('/', 1)[-1]}:{line}" if path and line.isdigit() else prov


def no_event_graph_words(ranks):
    """Why a profile holds no event graph, from its ranks' records (``model.ranks``): Legion
    writes one from format 1011 on, so in a log of that format it was cut off (the file ends
    early) — a truncated log was said to be of an older Legion."""
    formats = [int(r["format_version"]) for r in ranks
               if str(r.get("format_version") or "").isdigit()]
    if not formats or max(formats) < 1011:
        return ("the profile holds no event graph records (Legion writes them from format "
                "1011 on)")
    cut = any("span_ns" in r and r["span_ns"] is None for r in ranks)
    return (f"the profile holds no event graph records, though its format ({max(formats)}) "
            "has them" + ("; a log ends early (see its warning): they were cut off with it"
                          if cut else ""))


def skew_note(latency):
    """Where two nodes' clocks disagree by a slow message's time or more (``latency``: a
    ``causality.message_latency.MessageLatency``): the clock-skew notice, and that the path's
    gaps between nodes hold it; else None."""
    from legate_prof.causality.message_latency import SLOW_MESSAGE_NS
    if latency.clocks_apart_ns < SLOW_MESSAGE_NS:
        return None
    notice = next((n for n in latency.notices() if n.startswith("Clock skew")), None)
    return None if notice is None else (
        f"Note: {notice} The path's gaps between ranks include that difference.")


def stops_line(stop, window=False):
    """Why the path starts where it does: an event of a rank not given, or not recorded."""
    why = f" ({stop['note']})" if stop["note"] else ""
    if not stop["given"]:
        return (f"The path stops at what rank {stop['rank']} did{why}, and that rank was not "
                "given (the time it waited for it counts as 'unknown'; nothing can be "
                "inferred of a rank not read).")
    missing = stop.get("ranks_not_given") or []
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
        return (f"The path stops at an event no profile read records{why}: "
                f"{'rank' if len(missing) == 1 else 'ranks'} {shown} of the run "
                f"{'was' if len(missing) == 1 else 'were'} not given.")
    return (f"The path stops at an event of rank {stop['rank']} that its profile does not "
            f"record{why}: a runtime-internal event, or a log cut short"
            + (", or an item before the window's start." if window else "."))


def listing(path, limit):
    """The path's rows, steps of no time after a step folded into one line (not counted in
    ``limit``)."""
    rows, shown, k = [], 0, 0
    while k < len(path) and (not limit or shown < limit):
        rows.append(("step", path[k]))
        shown += 1
        z = k + 1
        while z < len(path) and _length(path[z]) == 0:
            z += 1
        if z > k + 1:
            rows.append(("zeros", (path[k], path[k + 1:z])))
        k = z
    lane_w = _lane_width([p for kind, p in rows if kind == "step"])
    # (where each step is on the timeline: to find it in the viewer, `view --start`)
    out = [f"  {'on path':>12}  {'from':>12}  {'item':<{ITEM_WIDTH}}{'lane':<{lane_w}}via"]
    for kind, x in rows:
        if kind == "zeros":
            out.append(zeros_line(*x))
            continue
        out.append(f"  {format_ns(_length(x)):>12}  "
                   f"{format_ns(x['on_path_ns'][0]):>12}  "
                   f"{cut_middle(_label(x), ITEM_WIDTH - 1):<{ITEM_WIDTH}}"
                   f"{cut_middle(_lane(x), lane_w - 1):<{lane_w}}{x['via']}")
    if k < len(path):
        out.append(f"  ... {plural(len(path) - k, 'more step')} (--limit 0 shows all, --json "
                   "too)")
    return out


def zeros_line(above, zeros):
    """One line for the steps of no time after ``above``."""
    later = all(z["start_ns"] >= above["on_path_ns"][0] for z in zeros)
    why = ("the chain passes through them, but they ran only after the step above began, "
           "so they hold none of its time" if later else "they hold no time on the path")
    return f"  {'':>12}  {'':>12}  … and {plural(len(zeros), 'step')} of 0 ns: {why}"


def _length(p):
    a, b = p["on_path_ns"]
    return b - a


def _lane(p):
    """The lane without its id in hex and what it is for (the same on every row of it)."""
    return _LANE_ID.sub("", p["lane"]).split(" — ")[0]
