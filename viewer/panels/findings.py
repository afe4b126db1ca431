"""The insights findings in a dock: clicking one zooms to its window and highlights its items.

Findings are plain dicts (``legate_prof insights --json``'s), computed by the caller; the items
of a finding are found through the query API's search on its source lines.  The panel asks
its window for the profile shown when a finding is clicked, so after another profile opens it
never reaches into the previous one; ``set_findings`` replaces the list.
"""

from __future__ import annotations

import os

import numpy as np
from PySide6 import QtCore, QtWidgets

from ..plain_text import tooltip

SHOWN_LINES = 3  # source lines in a finding's title (all of them in its tooltip)


def finding_items(source, finding):
    """Items launched from one of the finding's source lines."""
    hits = [source.search(p, limit=source.info().n_items + 1) for p in finding["provenance"]]
    hits = [h for h in hits if len(h)]
    return np.unique(np.concatenate(hits)) if hits else np.zeros(0, np.int64)


def finding_title(f):
    """'[temporaries] heat.py:13 — 4 full-size arrays made by one line (61.0 MiB)': findings
    that read the same are told apart by their lines (first, so a narrow dock shows them)."""
    lines = [os.path.basename(str(p)) for p in f.get("provenance", [])]
    where = ", ".join(lines[:SHOWN_LINES]) + (f" +{len(lines) - SHOWN_LINES}"
                                               if len(lines) > SHOWN_LINES else "")
    return f"[{f['pattern']}] " + (f"{where} — " if where else "") + str(f["title"])


class FindingsPanel(QtWidgets.QListWidget):
    def __init__(self, window, findings=()):
        super().__init__()
        self.window_ = window
        self._connected = False  # to the window's thread for finding items
        self.findings = []
        self.setWordWrap(True)
        self.setResizeMode(QtWidgets.QListView.ResizeMode.Adjust)
        self.itemClicked.connect(self._show)
        self.itemActivated.connect(self._show)
        self.set_findings(findings)

    def set_findings(self, findings, note=None):
        """Show these findings (or ``note`` instead, while they are computed or failed)."""
        self.clear()
        self.findings = list(findings or ())
        for f in self.findings:
            it = QtWidgets.QListWidgetItem(finding_title(f))
            it.setToolTip(tooltip(f"{f['title']}\nat {', '.join(f['provenance'][:12])}\n"
                                  f"remedy: {f['remedy']}"))
            self.addItem(it)
        if note is not None:
            self.addItem(str(note))
        elif not self.findings:
            self.addItem("no findings: no pattern from the guide shows in this profile")

    def _show(self, item):
        row = self.row(item)
        if 0 <= row < len(self.findings):
            self.show_finding(row)

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
            self._highlight((source, row), finding_items(source, f))
            return
        if not self._connected:
            work.done.connect(self._highlight)
            self._connected = True
        work.run(lambda: finding_items(source, f), (source, row))

    def _highlight(self, token, items):
        """A finding's items, found in a thread: highlighted, if its profile is still shown."""
        source, _row = token
        timeline = self.window_.timeline
        if timeline is None or source is not self.window_.source or \
                isinstance(items, Exception):
            return
        timeline.set_matches(items if len(items) else None)


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
    panel.set_findings(findings, note)
    return panel
