"""The insights findings in a dock: clicking one zooms to its window and highlights its items.

Findings are plain dicts (``legate_prof insights --json``'s), computed by the caller; the items
of a finding are found through the query API's search on its source lines.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets


def finding_items(source, finding):
    """Items launched from one of the finding's source lines."""
    hits = [source.search(p) for p in finding["provenance"]]
    hits = [h for h in hits if len(h)]
    return np.unique(np.concatenate(hits)) if hits else np.zeros(0, np.int64)


class FindingsPanel(QtWidgets.QListWidget):
    def __init__(self, source, timeline, findings):
        super().__init__()
        self.source = source
        self.timeline = timeline
        self.findings = list(findings)
        for f in self.findings:
            it = QtWidgets.QListWidgetItem(f"[{f['pattern']}] {f['title']}")
            it.setToolTip(f"at {', '.join(f['provenance'][:5])}\nremedy: {f['remedy']}")
            self.addItem(it)
        if not self.findings:
            self.addItem("no findings: no pattern from the guide shows in this profile")
        self.itemClicked.connect(self._show)
        self.itemActivated.connect(self._show)

    def _show(self, item):
        row = self.row(item)
        if row < len(self.findings):
            self.show_finding(row)

    def show_finding(self, row):
        f = self.findings[row]
        t0, t1 = f["window_ns"]
        pad = max((t1 - t0) // 50, 1000)
        self.timeline.set_time_range(max(t0 - pad, 0), t1 + pad)
        items = finding_items(self.source, f)
        self.timeline.set_matches(items if len(items) else None)


def add_findings_dock(window, findings):
    """One dock beside the search results."""
    panel = FindingsPanel(window.source, window.timeline, findings)
    dock = QtWidgets.QDockWidget("Findings", window)
    dock.setWidget(panel)
    window.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.findings = panel
    return panel
