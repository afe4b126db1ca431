"""What lanes the window shows: the rank filter (``0-3,7``, the CLI's ``--ranks`` syntax),
kind toggles, compact mode, and collapse/expand per rank, per kind and all (toolbar and View
menu)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from legate_prof.present.ranks import format_ranks, parse_ranks
from legate_prof.query import GROUP_ORDER

from .. import plain_text

COMPACT_FROM_RANKS = 8  # profiles of this many ranks open in compact mode


class LaneControls(QtCore.QObject):
    """Toolbar widgets and menu actions over the window's current timeline."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.timeline = None
        self.source = None
        self.ranks = QtWidgets.QLineEdit()
        self.ranks.setPlaceholderText("all ranks (e.g. 0-3,7)")
        self.ranks.setToolTip(plain_text.tooltip(
            "Ranks to show: numbers and ranges, e.g. 0-3,7 (as the command line's --ranks); "
            "empty: all"))
        self.ranks.setMaximumWidth(170)
        self.ranks.returnPressed.connect(self.apply_ranks)
        self.ranks.editingFinished.connect(self.apply_ranks)
        self.kinds_button = QtWidgets.QToolButton()
        self.kinds_button.setText("Kinds ▾")
        self.kinds_button.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        self.kinds_menu = QtWidgets.QMenu("Kinds shown", window)
        self.kinds_button.setMenu(self.kinds_menu)
        self.compact = QtGui.QAction("Compact", window, checkable=True)
        self.compact.setToolTip("small rows: many ranks on one screen")
        self.compact.toggled.connect(self._compact_chosen)
        self.chosen_compact = None  # (the user's Compact, kept for the whole: ``carried``)
        self.so_far_of = None  # (the ranks built so far shown: of this many rank files)
        self.kind_actions = {}

    def add_to(self, toolbar):
        toolbar.addSeparator()
        toolbar.addWidget(plain_text.label(" Ranks: "))
        toolbar.addWidget(self.ranks)
        toolbar.addWidget(self.kinds_button)
        toolbar.addAction(self.compact)
        toolbar.addAction("Collapse ranks", lambda: self.collapse_ranks(True))
        toolbar.addAction("Expand ranks", lambda: self.collapse_ranks(False))

    def add_menu(self, menu):
        menu.addAction("Expand all groups", lambda: self._call("expand", all_groups=True))
        menu.addAction("Collapse all groups",
                       lambda: self._call("expand", all_groups=True, expanded=False))
        menu.addAction("Collapse all ranks", lambda: self.collapse_ranks(True))
        menu.addAction("Expand all ranks", lambda: self.collapse_ranks(False))
        menu.addAction("Collapse/expand the rank at the top (C)",
                       lambda: self._call("toggle_rank_in_view"))
        self.expand_kind = menu.addMenu("Expand a kind on every rank")
        self.collapse_kind = menu.addMenu("Collapse a kind on every rank")
        menu.addMenu(self.kinds_menu)
        menu.addAction(self.compact)
        menu.addAction("Filter ranks…", self._focus_ranks)

    def setEnabled(self, on):
        for w in (self.ranks, self.kinds_button):
            w.setEnabled(on)
        self.compact.setEnabled(on)

    def _compact_chosen(self, on):
        self.chosen_compact = on
        if self.timeline is not None:
            self.timeline.set_compact(on)

    def _call(self, name, *a, **k):
        if self.timeline is not None:
            getattr(self.timeline, name)(*a, **k)

    def collapse_ranks(self, collapsed):
        """Collapse or open every rank; where each already is so, the status bar says so and
        what else opens (a rank open shows its groups as they are: "Expand ranks" on open
        ranks of closed groups did nothing, without a word — a GUI walk)."""
        tl = self.timeline
        if tl is None:
            return
        before = set(tl.lane_layout.collapsed_ranks)
        tl.collapse_ranks(collapsed)
        if set(tl.lane_layout.collapsed_ranks) == before:
            self.window.statusBar().showMessage(
                "every rank is collapsed already" if collapsed else
                "every rank is open already; View → Expand all groups opens their groups",
                5000)

    def _focus_ranks(self):
        self.ranks.setFocus()
        self.ranks.selectAll()

    def set_source(self, source, timeline, ranks=None, carried=False):
        """A new profile: its kinds in the menus, the ranks and kinds its layout shows
        (a new profile's: all), compact for many (for ``ranks`` where it holds a few of
        those: the ranks built so far).  ``carried``: the whole run replacing its ranks so
        far, laid out as the user left them (``MainWindow._as_left``): Compact as they
        chose it there, where they did."""
        if timeline is not self.timeline and timeline is not None:
            timeline.layoutChanged.connect(self._follow_reveals)
        self.source, self.timeline = source, timeline
        self.so_far_of = ranks
        if not carried:
            self.chosen_compact = None
        layout = timeline.lane_layout
        self.ranks.blockSignals(True)
        self.ranks.setText(_shown_text(source.outline().ranks, layout.hidden_ranks))
        self.ranks.blockSignals(False)
        kinds = sorted({(g.group, g.panel) for g in source.outline().groups},
                       key=lambda k: GROUP_ORDER.index(k[0]))
        self.kinds_menu.clear()
        self.expand_kind.clear()
        self.collapse_kind.clear()
        self.kind_actions = {}
        for key, panel in kinds:
            act = self.kinds_menu.addAction(panel)
            act.setCheckable(True)
            act.setChecked(key not in layout.hidden_groups)
            act.toggled.connect(self.apply_kinds)
            self.kind_actions[key] = act
            self.expand_kind.addAction(panel, lambda k=key: self._call("expand", [k]))
            self.collapse_kind.addAction(
                panel, lambda k=key: self._call("expand", [k], expanded=False))
        many = (ranks or len(source.outline().ranks)) >= COMPACT_FROM_RANKS
        if self.chosen_compact is not None:
            many = self.chosen_compact
        self.compact.blockSignals(True)
        self.compact.setChecked(many)
        self.compact.blockSignals(False)
        timeline.set_compact(many)

    def ranks_hidden_of(self, source):
        """The ranks of ``source`` (the whole run) that the Ranks box leaves out, as typed
        over its ranks so far ("0-3": the whole's 4-7 too), none where it is empty or
        names none of them."""
        known = source.outline().ranks
        try:
            shown = shown_ranks(self.ranks.text(), known)
        except ValueError:
            return set()
        return set() if shown is None else set(known) - set(shown)

    def apply_kinds(self, *args):
        hidden = {k for k, a in self.kind_actions.items() if not a.isChecked()}
        self._call("set_filter", hidden_groups=hidden)

    def apply_ranks(self):
        """Show only the ranks typed (the CLI's ``--ranks`` syntax; empty: all); a selection
        that is not one, or names none of the profile's ranks, says why (status bar)."""
        if self.source is None:
            return
        known = self.source.outline().ranks
        try:
            shown = shown_ranks(self.ranks.text(), known)
        except ValueError as e:
            building = (f" (the ranks built so far: the others can be named once all "
                        f"{self.so_far_of} are read)" if self.so_far_of else "")
            self.window.statusBar().showMessage(f"ranks: {e}; the ranks shown are kept"
                                                + building)
            self._say_shown()  # (a GUI walk: "5" stayed in the box, rank 1 alone shown)
            return
        hidden = set() if shown is None else set(known) - set(shown)
        if self.timeline is not None and hidden != self.timeline.lane_layout.hidden_ranks:
            self.timeline.set_filter(hidden_ranks=hidden)
            self.window.statusBar().showMessage(
                "all ranks shown" if not hidden else
                f"ranks shown: {format_ranks(shown)} of {format_ranks(known)}")

    def _follow_reveals(self):
        """A rank the filter hid, shown again to bring an item into sight (a search result,
        a finding, a link): the box says the ranks shown (a GUI walk: it still said "0" with
        rank 1 on screen), and the status bar why."""
        tl = self.timeline
        if tl is None or self.source is None:
            return
        known = self.source.outline().ranks
        try:
            said = shown_ranks(self.ranks.text(), known)
        except ValueError:
            return  # (a mistyped list: said when applied)
        hidden = set() if said is None else set(known) - set(said)
        if tl.lane_layout.hidden_ranks < hidden:  # (fewer hidden than the box says)
            back = sorted(hidden - tl.lane_layout.hidden_ranks)
            self._say_shown()
            self.window.statusBar().showMessage(
                f"rank {format_ranks(back)} shown again: what was asked for is there "
                "(the Ranks box hides it again)", 8000)

    def _say_shown(self):
        """The box back to the ranks the timeline shows."""
        hidden = self.timeline.lane_layout.hidden_ranks if self.timeline is not None else ()
        self.ranks.blockSignals(True)
        self.ranks.setText(_shown_text(self.source.outline().ranks, hidden))
        self.ranks.blockSignals(False)


def _shown_text(known, hidden):
    """The box's text for the ranks shown ("": all of them)."""
    return "" if not hidden else format_ranks(sorted(set(known) - set(hidden)))


def shown_ranks(text, known):
    """The profile's ranks that ``text`` names (``present.ranks.parse_ranks``, as the CLI's
    ``--ranks``), or None for an empty box (every rank); ``ValueError`` saying why when the
    text is not a rank list or names none of ``known``."""
    if not str(text).strip():
        return None
    wanted = set(parse_ranks(text))
    shown = tuple(r for r in known if r in wanted)
    if not shown:
        raise ValueError(f"{str(text).strip()!r} names none of this profile's ranks "
                         f"({format_ranks(known)})")
    return shown
