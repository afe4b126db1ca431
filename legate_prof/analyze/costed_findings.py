"""``insights``' findings as every view shows them: each with its wall-clock cost and idle
time in the words the text says them (``insights_text.cost_words``, ``idle_words``), and the
sentence of how much of the run their costs are shares of (``explained_words``) — the
report's Findings section and the viewer's findings dock alike."""

from __future__ import annotations

from legate_prof.analyze.insights import holds_items, insights_of_run
from legate_prof.analyze.insights_text import (below_heading, cost_words, evidence_lines,
                                                explained_words, format_insights, idle_words)


def costed_findings(profile, windowed=False) -> dict:
    """``insights_of_run(profile)`` (``{"findings", "run_ns", "explained_ns"}``, the dearest
    first), each finding with ``cost_words`` and ``idle_words``, and ``explained_words``;
    ``windowed``: the profile is a window of the run (--start/--stop), and the words say so
    ("this window's"), as ``insights`` says them."""
    found = insights_of_run(profile, windowed)
    whole = "this window's" if windowed else "the run's"
    for x in found["findings"]:
        if x["pattern"] not in ("out_of_memory", "crash"):
            x["cost_words"] = cost_words(x, whole, run_ns=found["run_ns"])
        x["idle_words"] = idle_words(x["evidence"]) or ""
        x["evidence_words"] = evidence_lines(x["evidence"])
    if found["findings"]:
        found["explained_words"] = explained_words(found, windowed)
        found["below"] = below_heading(found["findings"], whole)
    else:  # (what `insights` says: a report's Findings section says it too, not nothing)
        found["none_words"] = format_insights([], windowed, empty=not holds_items(profile))
    return found
