"""The text form of ``legate_prof insights``: each finding in lines (its lines of source, its
window, what it costs in wall-clock and processor time, the idle time before its work, the
evidence and the remedy), and the cost and idle sentences the report shows as they are."""

from __future__ import annotations

from legate_prof.analyze.critical_text import INFERRED_WORDS
from legate_prof.present.ranks import format_ranks
from legate_prof.present.units import format_ns


def explained_words(found, windowed=False):
    """How much of the run (or window) the wall-clock costs below are shares of, and how
    much of that rests on inferred links."""
    whole = "window" if windowed else "run"
    run, explained = found["run_ns"], found["explained_ns"]
    where = found.get("run_path_where")
    if not explained and where:
        a, b = where["run_path_ns"]
        stop = where.get("stops_at") or {}
        before = (f"; before it, on rank {stop['rank']}, not given" if stop
                  and not stop["given"] else "")
        return (f"The {whole}'s {format_ns(run)}: the run's critical path does not pass "
                f"through it (it lies from {format_ns(a)} to {format_ns(b)}{before}); the "
                "findings below cost no share of it.")
    if not explained:
        return (f"The {whole}'s {format_ns(run)}: no critical path (the profile holds no "
                "Legion timeline to walk: a run that crashed, or runtime streams alone); "
                "the findings below cost no share of it.")
    share = f"{100.0 * explained / run:.1f} %" if run else "-"
    costed = sum(x["wall_ns"] for x in found["findings"])
    inferred = sum(x.get("inferred_ns", 0) for x in found["findings"])
    guess = (f", {format_ns(inferred)} of that through links inferred past events Legion "
             f"does not record ({INFERRED_WORDS})" if inferred else "")
    missing = found.get("ranks_not_given")
    left = (" The rest is unknown: the path goes on in a rank whose profile was not read "
            f"(rank{'s' * (len(missing) > 1)} {format_ranks(missing)}: give every rank's files "
            "for the whole run's findings)." if missing else "")
    apart = found.get("clocks_apart_ns")
    clocks = (f" Its ranks' clocks read {format_ns(apart)} apart: the {whole}'s length and "
              "the path's gaps between ranks hold that offset, not the program's time."
              if apart else "")
    return (f"The {whole}'s {format_ns(run)}: {format_ns(explained)} ({share}) explained by "
            f"its critical path (`legate_prof critical`); the findings below hold "
            f"{format_ns(costed)} of it ({100.0 * costed / run if run else 0:.1f} %){guess}."
            + left + clocks)


def format_insights(findings, windowed=False, empty=False, run_ns=None):
    """Text lines of the findings; ``windowed``: found in a window of the run (--start/--stop),
    whose own critical path their wall-clock costs share; ``empty``: the profile (or the
    window) holds no item, so no finding says nothing about the run."""
    whole = "this window's" if windowed else "the run's"
    if not findings and empty:
        where = "the window (--start/--stop)" if windowed else "the profile"
        return f"No finding: {where} holds nothing to judge (no item of the run is in it)."
    if not findings:
        return "No finding: none of the guide's inefficiency patterns shows in this profile."
    lines = []
    below = below_heading(findings, whole)
    for k, x in enumerate(findings, 1):
        if below and k - 1 == below["at"]:  # (listed last: by wall-clock time)
            lines.append(below["words"])
        lines.append(f"{k}. [{x['pattern']}] {x['title']}")
        if x["provenance"]:
            shown = ", ".join(x["provenance"][:5])
            more = len(x["provenance"]) - 5
            lines.append(f"   at {shown}" + (f" (+{more} more)" if more > 0 else ""))
        a, b = x["window_ns"]
        lines.append(f"   when {format_ns(a)} – {format_ns(b)}"
                     + (f" ({x['window_is']})" if x.get("window_is") else ""))
        if x["pattern"] not in ("out_of_memory", "crash"):
            lines.append("   " + cost_words(x, whole, run_ns))
        idle = idle_words(x["evidence"])
        if idle:
            lines.append("   " + idle)
        ev = evidence_lines(x["evidence"])
        lines.append(f"   {ev[0]}")
        lines += [f"     {line}" for line in ev[1:]]
        lines.append(f"   remedy: {x['remedy']}")
    return "\n".join(lines)


def evidence_lines(evidence):
    """A finding's evidence as `insights` prints it: "evidence: k=v, ...", then an
    out-of-memory report's holders one a line ("store 2 (…): …"); the report shows them too
    (it showed no holder: the guide's Example 2 story, a review)."""
    held = {k: v for k, v in evidence.items() if k.startswith("held by store ")}
    ev = ", ".join(f"{k}={v}" for k, v in evidence.items()
                   if not isinstance(v, dict) and k not in held)
    return [f"evidence: {ev}"] + [f"{k.removeprefix('held by ')}: {v}" for k, v in held.items()]


def below_heading(findings, whole="the run's"):
    """Where the findings that cost no wall-clock time of their own begin (after the first)
    and the words heading them, as ``{"at": index, "words": ...}``, or None (the text and the
    report's list alike)."""
    at = next((k for k, x in enumerate(findings) if k > 0 and _costs_none(x)), None)
    return None if at is None else {"at": at, "words": _below_words(findings[at:], whole)}


def _below_words(below, whole):
    """The line above the findings that cost no wall-clock time of their own: "Minor" where
    none holds any of the critical path; else that their share of it is counted above (a
    review: waits for values of 70 % of the run listed under "Minor", their path counted
    under the finding tiny_tasks)."""
    waits = (", or, a wait for a value the path holds, nothing launched after it could have "
             "overlapped it" if any(_blocked_uncounted(y) for y in below) else "")
    if any(y.get("path_ns", 0) for y in below):
        return (f"No time of their own: the findings below add none of {whole} wall-clock "
                "time to those above (their share of the critical path is counted under a "
                f"finding above, or their work ran beside it{waits}); what they say can still "
                "be part of the fix.")
    return (f"Minor: the findings below cost none of {whole} wall-clock time (their work "
            f"ran beside the critical path{waits}).")


# findings whose lines are not where their work was launched (the shutdown's: the lines whose
# arrays it released; the runtime's meta-work: the loop's lines): no line figure beside them
LINES_NOT_ITS_OWN = ("shutdown", "runtime_overhead")


def _costs_none(x):
    """A finding with no wall-clock time of its own, known to have none (not a failure's, not
    one whose cost the clocks hide)."""
    return (x["wall_ns"] == 0 and x["pattern"] not in ("out_of_memory", "crash")
            and "clocks_apart_ns" not in x["evidence"] and not x.get("no_path"))


def cost_words(x, whole="the run's", run_ns=None):
    """What a finding costs, in words: its share of the critical path (and of the run, where
    ``run_ns`` is given), or that it has none (its work ran beside the path), and its
    processor time (the text's and the report's)."""
    cpu = f"processor time: {format_ns(x['processor_ns'])} (summed over processors)"
    if "clocks_apart_ns" in x["evidence"]:
        return (f"costs an unknown share of {whole} wall-clock time: the ranks' clocks "
                f"disagree, so waits across ranks cannot be measured; {cpu}")
    if x.get("no_path"):
        return (f"costs an unknown share of {whole} wall-clock time: there is no critical "
                f"path to measure it on; {cpu}")
    held = x.get("path_ns", x["wall_ns"])
    under = x.get("counted_under") or []
    named = (" " + " and ".join(under[:2]) + (f" and {len(under) - 2} more" if len(under) > 2
                                               else "")) if under else " above"
    if x["wall_ns"] == 0 and held:
        return (f"costs none of {whole} wall-clock time beyond the finding{'s' * (len(under) > 1)}"
                f"{named}: its work holds {format_ns(held)} of the critical path, all of it "
                f"counted there (each piece of the path counts for one finding); {cpu}")
    if _blocked_uncounted(x):  # (the path holds the program in its waits)
        return _blocked_words(x, whole, x["evidence"]["blocked_on_path_ns"], cpu)
    if x["wall_ns"] == 0 and x.get("lines_ns"):
        return (f"costs none of {whole} wall-clock time of its own: its work is not on the "
                f"critical path, though its lines hold {format_ns(x['lines_ns'])} of it "
                f"there as other work (launching, the runtime's: `legate_prof critical`, by "
                f"source line); {cpu}")
    if x["wall_ns"] == 0:
        return (f"costs none of {whole} wall-clock time: none of its work is on the "
                f"critical path; {cpu}")
    shared = (f"; its work holds {format_ns(held)} of the path, the rest counted under the "
              f"finding{'s' * (len(under) > 1)}{named}" if held > x["wall_ns"] else "")
    inferred = x.get("inferred_ns", 0)
    # (the first line says what an inferred link is: each finding said it again in full, a
    # review found the words heavy)
    guess = (f"; {format_ns(inferred)} of it through inferred links, an estimate"
             if inferred else "")
    part = f", {100.0 * x['wall_ns'] / run_ns:.1f} %" if run_ns else ""
    # (the figure `critical` gives its lines, by source line, where it differs: a user read
    # 417 ms here and 721 ms there for one line, with nothing linking the two)
    lines = x.get("lines_ns", 0)
    theirs = (f"; its lines hold {format_ns(lines)} of the path in all, their other work "
              "included (`legate_prof critical`, by source line)"
              if lines and lines != x["wall_ns"] and x["provenance"]
              and x["pattern"] not in LINES_NOT_ITS_OWN else "")
    return (f"costs {format_ns(x['wall_ns'])} of {whole} wall-clock time{part} (its share of "
            f"the critical path{shared}{guess}{theirs}); {cpu}")


def _blocked_uncounted(x):
    """Whether ``x`` is waits for values the path holds the program blocked in, none of it
    counted (not beside the path, and not counted under another finding)."""
    return (x["pattern"] == "blocking" and x["wall_ns"] == 0
            and not x.get("path_ns", x["wall_ns"])
            and bool(x["evidence"].get("blocked_on_path_ns", 0)))


def _blocked_words(x, whole, blocked, cpu):
    """What the program's waits that the critical path holds, blocked, cost where none of it
    is counted: not "its work is not on the critical path" (a window's path, `critical
    --start/--stop`, held the program blocked there) but why its lower bound is none."""
    lines = (f"; its lines hold {format_ns(x['lines_ns'])} of it in all, their other work "
             "included (`legate_prof critical`, by source line)" if x.get("lines_ns") else "")
    return (f"costs none of {whole} wall-clock time that can be counted: the critical path "
            f"holds the program blocked in these waits for {format_ns(blocked)} (`legate_prof "
            "critical`: blocked), but nothing the program launched after them on the path "
            f"could have overlapped it (the remedy says why){lines}; {cpu}")


def idle_words(evidence):
    """The idle time before the finding's work, said with what it is summed over and what the
    work mostly waited for (``insights._idle_evidence``), or None."""
    idle = evidence.get("idle_before_ns", 0)
    waits = evidence.get("idle_waiting_for") or {}
    if not idle:
        return None
    ranked = sorted(((ns, w) for w, ns in waits.items() if ns > 0), reverse=True)
    top = ranked[:2] if len(ranked) <= 3 else ranked[:2] + [(sum(ns for ns, _ in ranked[2:]),
                                                              "the rest")]
    top += ranked[2:] if len(ranked) == 3 else []
    # (every part said: the two largest, then the rest, so the parts add up to the idle
    # time said; a review added 77.9 + 10.1 ms and missed 1.8 ms of copies)
    why = ", ".join(f"{IDLE_WAIT_WORDS.get(w, w)} {format_ns(ns)}" for ns, w in top)
    return (f"idle before its work: {format_ns(idle)}, summed over the processors that "
            f"waited (not wall-clock time)" + (f"; waiting for: {why}" if why else ""))


# what the work after an idle stretch waited for (``idle_gaps.WAITS``), in words
IDLE_WAIT_WORDS = {"copy_fill": "a copy or fill", "mapping": "mapping on utility",
                   "task": "another task", "message": "a message",
                   "memory": "an instance's memory", "unknown": "nothing known",
                   "the rest": "the rest"}


__all__ = ["format_insights", "cost_words", "idle_words", "IDLE_WAIT_WORDS"]
