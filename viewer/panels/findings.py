"""The insights findings in a dock: clicking one zooms to its window and highlights its items.

Findings are plain dicts (``legate_prof insights --json``'s), computed by the caller (with
the run's costs: each one's wall-clock cost and share of the run, the dearest first); the items
of a finding are found through the query API's search on its source lines.  The panel asks
its window for the profile shown when a finding is clicked, so after another profile opens it
never reaches into the previous one; ``set_findings`` replaces the list.  Those of no
wall-clock time of their own come under the words ``insights`` and the report head them with
(``costed_findings``' "below": ``insights_text.below_heading``, the one wording).
"""

from __future__ import annotations

import os

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from legate_prof.present.units import format_ns
from legate_prof.query import ItemKind, kinds_counted

from ..plain_text import tooltip

SHOWN_LINES = 3  # source lines in a finding's title (all of them in its tooltip)
HEAD_TEXT = QtGui.QColor(60, 60, 60)  # the first row: how much of the run the costs are of


def finding_items(source, finding):
    """Items launched from one of the finding's source lines; for slow messages (no line of
    the program's: a click showed nothing), the messages the run's critical path waited on,
    what its cost is made of."""
    if finding.get("pattern") == "message_latency" and not finding.get("provenance"):
        on_path = np.unique(np.array([s.item for s in source.run_critical_path()], np.int64))
        if not len(on_path):
            return on_path
        kinds = source.items_columns(on_path, ["kind"])["kind"]
        return on_path[kinds == int(ItemKind.MESSAGE)]
    return source.items_of_lines(finding.get("provenance", []))


# which of a finding's items a click brings into sight first: its tasks (a GUI walk: the
# warm-up finding scrolled to the mapping of its line on a utility lane, its Random tasks out
# of sight), then what holds memory (an out-of-memory finding's instances, not its operations)
FIRST_SHOWN = (ItemKind.TASK, ItemKind.GPU_KERNEL, ItemKind.INSTANCE, ItemKind.COPY,
               ItemKind.FILL)
# a finding of the program waiting: the wait itself first (its line's tasks ran before it)
FIRST_SHOWN_OF = {"blocking": (ItemKind.PROGRAM_WAIT, *FIRST_SHOWN)}


def shown_items(source, finding):
    """(``finding_items``, the one of them a click brings into sight — the earliest in the
    finding's window of its tasks, else of what holds memory, else of any, on the finding's
    rank where it names one — or None, what they are in words): what a click on the
    finding shows, worked out in a thread."""
    items = finding_items(source, finding)
    if not len(items):
        return items, None, ""
    cols = source.items_columns(items, ["start", "stop", "kind", "lane"])
    a, b = finding["window_ns"]
    inside = (cols["stop"] >= a) & (cols["start"] <= b)
    rank = finding.get("evidence", {}).get("rank")
    if rank is not None:
        ranks = np.array([L.rank for L in source.outline().lanes], np.int64)[cols["lane"]]
        if (inside & (ranks == int(rank))).any():
            inside &= ranks == int(rank)
    first_kinds = FIRST_SHOWN_OF.get(finding.get("pattern"), FIRST_SHOWN)
    order = np.full(len(items), len(first_kinds), np.int64)
    for k, kind in enumerate(first_kinds):
        order[cols["kind"] == int(kind)] = k
    inside = np.flatnonzero(inside)
    best = inside[order[inside] == order[inside].min()] if len(inside) else inside
    first = int(items[best[np.argmin(cols["start"][best])]]) if len(best) else None
    kinds = np.bincount(np.asarray(cols["kind"], np.int64))
    return items, first, kinds_counted({k: int(kinds[k]) for k in np.flatnonzero(kinds).tolist()})


def finding_title(f):
    """'[temporaries] heat.py:13 — 4 full-size arrays made by one line (61.0 MiB)': findings
    that read the same are told apart by their lines (first, so a narrow dock shows them)."""
    lines = [os.path.basename(str(p)) for p in f.get("provenance", [])]
    where = ", ".join(lines[:SHOWN_LINES]) + (f" +{len(lines) - SHOWN_LINES}"
                                               if len(lines) > SHOWN_LINES else "")
    return f"[{f['pattern']}] " + (f"{where} — " if where else "") + str(f["title"])


FAILURES = ("out_of_memory", "crash")  # (first: what ended the run; no wall-clock cost)


def by_cost(findings):
    """Failures first, then by wall-clock cost, the dearest first (then processor time)."""
    return sorted(findings, key=lambda f: (f.get("pattern") not in FAILURES,
                                           -int(f.get("wall_ns", 0) or 0),
                                           -int(f.get("processor_ns", 0) or 0)))


def cost_label(f, run_ns):
    """'197.930 s · 80.0 % of the run', 'no time on the critical path' (its work is off the
    path), '… (its work holds 75.073 s of the path, the rest counted above)' where an earlier
    finding counts most of its pieces (a review read "0.1 %" above "the path waits on
    messages for 75 s"), 'cost unknown: no critical path' where the run has none (oom2's read
    "no time on the critical path"), '' for a failure or where costs are not known."""
    if f.get("pattern") in FAILURES or "wall_ns" not in f:
        return ""
    if f.get("no_path"):
        return "cost unknown: no critical path"
    wall, held = int(f["wall_ns"] or 0), int(f.get("path_ns") or 0)
    above = (f"its work holds {format_ns(held)} of the path, counted above"
             if held > wall else "")
    if not wall:
        return f"no time of its own on the path ({above})" if above else \
            "no time on the critical path"
    share = f" · {100.0 * wall / run_ns:.1f} % of the run" if run_ns else ""
    return f"{format_ns(wall)}{share}" + (
        f" ({above.replace('counted above', 'the rest counted above')})" if above else "")


FINDING_ROLE = QtCore.Qt.ItemDataRole.UserRole  # a finding's row: its index in ``findings``


def _heading(words, bold=False):
    """A row of words above findings, not one itself (not selectable), in dark text (not the
    disabled palette's light gray, hard to read on white: a review)."""
    head = QtWidgets.QListWidgetItem(words)
    head.setFlags(QtCore.Qt.ItemFlag.NoItemFlags)
    head.setForeground(QtGui.QBrush(HEAD_TEXT))
    head.setToolTip(tooltip(words))
    if bold:
        font = head.font()
        font.setBold(True)
        head.setFont(font)
    return head


def _below_at(costs, shown):
    """Where the findings of no wall-clock time of their own begin among those ``shown``
    (``costs["below"]["at"]``: an index in `insights`' order, the order ``by_cost`` gives),
    or None."""
    at = (costs.get("below") or {}).get("at")
    return at if isinstance(at, int) and 0 < at < len(shown) else None


class FindingsPanel(QtWidgets.QListWidget):
    def __init__(self, window, findings=()):
        super().__init__()
        self.window_ = window
        self._connected = False  # to the window's thread for finding items
        self.findings = []
        self.run_ns = None
        self.explained = ""  # how much of the run the costs are shares of (first row)
        self.setWordWrap(True)
        self.setResizeMode(QtWidgets.QListView.ResizeMode.Adjust)
        # (the findings ran together as one block of wrapped text, a review: rows of
        # alternating ground, a little apart)
        self.setAlternatingRowColors(True)
        self.setSpacing(2)
        self.itemClicked.connect(self._show)
        self.itemActivated.connect(self._show)
        self.currentItemChanged.connect(self._keyed)
        self.set_findings(findings)

    def set_findings(self, findings, note=None):
        """Show these findings (or ``note`` instead, while they are computed or failed):
        a list, or the run's costs (``{"findings", "run_ns", "explained_words"}``: each
        finding's wall-clock cost and share of the run first in its row, the dearest first,
        the sentence of how much of the run the path explains above them)."""
        self.clear()
        self.given = findings  # (as given: a window keeps them while another profile loads)
        costs = findings if isinstance(findings, dict) else {"findings": findings or ()}
        self.run_ns = costs.get("run_ns")
        self.explained = str(costs.get("explained_words") or "")
        self.findings = by_cost(costs["findings"]) if "run_ns" in costs else \
            list(costs["findings"])
        if self.explained and self.findings:
            self.addItem(_heading(self.explained))
        below = _below_at(costs, self.findings)
        for k, f in enumerate(self.findings):
            if k == below:  # (as `insights` and the report head them: a review read the dock's
                self.addItem(_heading(costs["below"]["words"], bold=True))  # costless as peers)
            cost = cost_label(f, self.run_ns)
            it = QtWidgets.QListWidgetItem((f"{cost} — " if cost else "") + finding_title(f))
            words = "\n".join(w for w in (f.get("cost_words"), f.get("idle_words")) if w)
            it.setToolTip(tooltip(f"{f['title']}\nat {', '.join(f['provenance'][:12])}\n"
                                  + (f"{words}\n" if words else "")
                                  + f"remedy: {f['remedy']}"))
            it.setData(FINDING_ROLE, k)
            self.addItem(it)
        if note is not None:
            self.addItem(str(note))
        elif not self.findings:
            self.addItem("no findings: no pattern from the guide shows in this profile")

    def finding_row(self, item):
        """The finding an item of the list shows (its index in ``findings``), or None (the
        sentences above and between them, a note)."""
        row = item.data(FINDING_ROLE) if item is not None else None
        return row if isinstance(row, int) and 0 <= row < len(self.findings) else None

    def row_of(self, k):
        """The list's row showing finding ``k`` (of ``findings``), or None."""
        return next((r for r in range(self.count()) if self.finding_row(self.item(r)) == k),
                    None)

    def _show(self, item):
        row = self.finding_row(item)
        if row is not None:
            self.show_finding(row)

    def _keyed(self, item, _previous):
        """A finding chosen with the keys (↑ ↓ in the list) is shown as a click shows it (a
        GUI walk: the list selected another finding, the view kept the last); a mouse press
        is left to its click, a list filled or cleared to no one."""
        if item is None or not self.hasFocus() or \
                QtWidgets.QApplication.mouseButtons() != QtCore.Qt.MouseButton.NoButton:
            return
        self._show(item)

    def show_finding(self, row):
        timeline = self.window_.timeline
        source = self.window_.source
        if timeline is None or source is None:
            return
        f = self.findings[row]
        t0, t1 = f["window_ns"]
        pad = max((t1 - t0) // 50, 1000)
        timeline.set_time_range(max(t0 - pad, 0), t1 + pad)
        work = getattr(self.window_, "finding_work", None)
        if work is None:  # (a window without threads for it)
            self._highlight((source, row), shown_items(source, f))
            return
        if not self._connected:
            work.done.connect(self._highlight)
            self._connected = True
        work.run(lambda: shown_items(source, f), (source, row))

    def _highlight(self, token, found):
        """A finding's items, found in a thread: highlighted, if its profile is still shown;
        the first of them in its window brought into sight (the time range kept), the last
        item's details cleared, what is highlighted said in the status bar (a GUI walk: the
        slow messages' slivers were highlighted off the lanes in view, nothing said so)."""
        source, row = token
        timeline = self.window_.timeline
        if timeline is None or source is not self.window_.source or \
                isinstance(found, Exception):
            return
        items, first, words = found
        timeline.set_matches(items)
        timeline.select(None)
        self.window_.details.show_hit(source, None)
        if first is not None:
            timeline.reveal_item(first)
        else:
            _reveal_named_memory(source, timeline, self.findings[row])
        self.window_.statusBar().showMessage(
            f"{words} of the finding highlighted (Esc clears)" if len(items) else
            f"the finding [{self.findings[row]['pattern']}] has no item to highlight")


def _reveal_named_memory(source, timeline, finding):
    """The memory a finding names (``evidence``: "rank", "memory") brought into sight where
    none of its items is (a memory under pressure with no line of the program: a GUI walk
    saw the view zoom and rank 1's memory stay hidden by the ranks filter)."""
    ev = finding.get("evidence", {})
    if ev.get("rank") is None or not ev.get("memory"):
        return
    lanes = [k for k, L in enumerate(source.outline().lanes)
             if L.rank == int(ev["rank"]) and L.group == ev["memory"]]
    if lanes:
        timeline.show_lane(lanes[0])


# The right side's heights when the findings come: what a profile opens with (the findings)
# gets half; the details (empty until a click) and the search results (until a search) less.
SIDE_SHARES = {"details": 0.35, "search_results": 0.15, "findings": 0.5}


def _share_the_side(window):
    """The docks of the right side at ``SIDE_SHARES`` of the window's height (the findings
    came last and got ~110 px of 900: three findings cut mid-line, a GUI walk)."""
    docks = [window.findChild(QtWidgets.QDockWidget, name) for name in SIDE_SHARES]
    if any(d is None for d in docks) or window.height() <= 0:
        return
    window.resizeDocks(docks, [int(share * window.height()) for share in SIDE_SHARES.values()],
                       QtCore.Qt.Orientation.Vertical)


def add_findings_dock(window, findings=(), note=None):
    """One dock beside the search results (made once; later profiles replace its list)."""
    panel = getattr(window, "findings", None)
    if panel is None:
        panel = FindingsPanel(window)
        dock = QtWidgets.QDockWidget("Findings", window)
        dock.setObjectName("findings")
        dock.setWidget(panel)
        window.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, dock)
        window.findings = panel
        _share_the_side(window)
    panel.set_findings(findings, note)
    return panel
