"""Past the events Legion does not record: a likely predecessor for each link the reference
leaves "unknown", marked as inferred, and how often the rule finds the known ones.

The reference stops where an item's (or a wait's) critical precondition is an event that no
loaded profile makes: a user event the runtime triggers outside anything it records (an
index space computed by dependent partitioning, a collective's reply, shutdown), or one of a
rank not given.  The event's id says which node made it; the waiter says when it became
ready (an item's ``ready``, a wait's ``wait_ready``): the event had triggered by then.

The rule: **what triggered it is, of the acts seen on the event's node by the time the
waiter became ready, the one most like what triggers such a waiter in this run, the latest
of equals** — an act is an item ending (a task's, copy's, fill's … completion is an event)
or an entry performing an event record (a trigger, merger, barrier arrival, reservation, …
Legion writes when each was performed and by which entry: the innermost call it was running
then).  "Like": the run's own links that the reference resolves through an event say what
triggered which waiter (``Habits``: by the waiter's name, the acting item's name and how it
acted — a "Deferred Mapping Pipeline Stage" waits for a barrier that a "Mapping Pipeline
Stage" of another node arrived at, often milliseconds and several acts before); of the
``CANDIDATES`` latest acts each scores the log of how often its kind triggered the waiter's
kind, less a cost per act further back (more on one node, where the latest act is usually
it, than across nodes, where the network's delay lets others act in between).  A waiter of
a kind no known link names gets the latest act.  Across nodes the ready time is moved to the
event's node by the fastest message seen from that node to the waiter's (its create − spawn
holds the network's least latency and the two clocks' skew): the trigger happened no later
than that.  Where the event's node has no loaded profile, or nothing acted on it before,
the link stays unknown.

``agreement`` checks the rule where the answer is known: every link the reference resolves
through an event ("event" rows with an item) is hidden and inferred, and compared with the
item the reference names, the row's own link left out of the habits (docs/critical_path.md
gives the figures; a test keeps them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legate_prof.assemble.event_records import event_node
from legate_prof.causality.critical_inputs import ENTRY_KINDS, kinds_mask
from legate_prof.causality.event_graph import find_sorted
from legate_prof.causality.link_rules import VIA_EVENT, VIA_UNKNOWN
from legate_prof.model.event_tables import (COPY_EVENT, DEP_PART_EVENT, FILL_EVENT, NO_TIME,
                                            TASK_EVENT)
from legate_prof.model.kinds import ItemKind
from legate_prof.model.sort_order import lex_order, stable_order, unique_values, unique_with

# what acts by ending: entries, kernels, copies, fills, dependent partitioning (a call acts
# through the records it performs: a call's end alone named the wrong item more often)
ACTING_KINDS = (*ENTRY_KINDS, ItemKind.GPU_KERNEL, ItemKind.COPY, ItemKind.FILL,
                ItemKind.DEP_PART)


@dataclass
class Inferred:
    """Per row of a ``LinkRows`` table: the inferred predecessor (-1: none inferred) and
    when it acted (``NO_TIME``: none)."""

    target: np.ndarray
    trigger: np.ndarray

    @classmethod
    def none(cls, n):
        return cls(np.full(n, -1, np.int64), np.full(n, NO_TIME, np.int64))


# the event an item's end completes, by item kind (what an action "is", as the reference's
# event kinds say it: a task's end a TaskEvent, a copy's a CopyEvent …)
_COMPLETION_KIND = np.full(256, TASK_EVENT, np.int64)
_COMPLETION_KIND[[ItemKind.COPY, ItemKind.FILL, ItemKind.DEP_PART]] = (COPY_EVENT, FILL_EVENT,
                                                                       DEP_PART_EVENT)


class ItemActs:
    """The acts of items ending (``ACTING_KINDS``), per node in time order (of equal times,
    by item): the part of ``NodeActions`` every ask shares, and what bounds the event
    records an ask can reach (``windows``)."""

    def __init__(self, links):
        times, items, nodes, how = [], [], [], []
        for p in links.parts or []:
            m = p.model
            it = m.items
            lane_node = np.asarray(m.lanes["rank"], np.int64)
            acts = np.flatnonzero(kinds_mask(it["kind"], ACTING_KINDS))
            times.append(np.asarray(it["stop"], np.int64)[acts])
            items.append(acts.astype(np.int64) + p.item_off)
            nodes.append(lane_node[np.asarray(it["lane"], np.int64)[acts]])
            how.append(_COMPLETION_KIND[np.asarray(it["kind"], np.int64)[acts]])
        cat = (lambda xs: np.concatenate(xs).astype(np.int64) if xs else np.zeros(0, np.int64))
        t, i, n, h = cat(times), cat(items), cat(nodes), cat(how)
        o = lex_order((i, t, n))
        self.time, self.item, self.node, self.how = t[o], i[o], n[o], h[o]
        self.node_start = _node_spans(self.node)

    def windows(self, node, bound):
        """{node: (starts, the latest end of the windows starting by each)}: per ask, the
        times from the end of the ``CANDIDATES``-th last item act at or before ``bound``
        (none so many: from the first) to ``bound`` — an event record outside every window
        of its node is no ask's candidate."""
        node, bound = np.asarray(node, np.int64), np.asarray(bound, np.int64)
        out = {}
        for n in unique_values(node).tolist():
            q = np.flatnonzero(node == n)
            lo_hi = self.node_start.get(int(n))
            start = np.full(len(q), np.iinfo(np.int64).min, np.int64)
            if lo_hi is not None:
                lo, hi = lo_hi
                pos = lo + np.searchsorted(self.time[lo:hi], bound[q], side="right") - 1
                far = pos - (CANDIDATES - 1)
                start = np.where(far >= lo, self.time[np.maximum(far, lo)], start)
            o = stable_order(start)
            out[int(n)] = (start[o], np.maximum.accumulate(bound[q][o]))
        return out


def _within(windows, node, t):
    """Whether each (node, time) lies in one of ``ItemActs.windows`` of its node."""
    keep = np.zeros(len(t), bool)
    for n, (starts, ends) in windows.items():
        q = np.flatnonzero(node == n)
        k = np.searchsorted(starts, t[q], side="right") - 1
        keep[q] = (k >= 0) & (ends[np.maximum(k, 0)] >= t[q])
    return keep


def _node_spans(node):
    """{node: (first, end)} positions of each node's run in ``node`` (sorted)."""
    if len(node) == 0:
        return {}
    bounds = np.flatnonzero(np.diff(node)) + 1
    starts, ends = np.r_[0, bounds], np.r_[bounds, len(node)]
    return {int(node[s]): (int(s), int(e)) for s, e in zip(starts, ends)}


class NodeActions:
    """Everything seen acting, per node, in time order: (time, item).

    ``near``: (node, bound) of the asks to answer (``last_by`` and the ``CANDIDATES`` before
    each): then of the event records only those that may be among an ask's candidates are
    resolved to the item that performed them (the innermost call running: most of the
    table's cost), the records of a node earlier than its ``CANDIDATES``-th last item's end
    before the bound being no candidate of that ask — the candidates are those of the
    whole table (``item_acts``: ``ItemActs`` made once, for several tables)."""

    def __init__(self, links, near=None, item_acts=None):
        acts = item_acts or ItemActs(links)
        times, items, nodes, how = [acts.time], [acts.item], [acts.node], [acts.how]
        windows = None if near is None else acts.windows(*near)
        lookups = links.lookups
        for p in links.parts or []:
            rec = p.model.events["records"]
            made = np.flatnonzero((rec["creator"] != 0) & (rec["time"] != NO_TIME))
            if len(made) and windows is not None:
                t = np.asarray(rec["time"], np.int64)[made]
                made = made[_within(windows, event_node(np.asarray(rec["creator"],
                                                                   np.uint64)[made]), t)]
            if len(made):
                creator = np.asarray(rec["creator"], np.uint64)[made]
                t = np.asarray(rec["time"], np.int64)[made]
                entry = lookups.find(creator, "entry")
                call = lookups.running(creator, t)
                who = np.where(call >= 0, call, entry)
                ok = who >= 0
                times.append(t[ok])
                items.append(who[ok])
                nodes.append(event_node(creator[ok]).astype(np.int64))
                how.append(np.asarray(rec["kind"], np.int64)[made][ok])
        t, i, n = (np.concatenate(x).astype(np.int64) for x in (times, items, nodes))
        h = np.concatenate(how).astype(np.int64)
        o = lex_order((i, t, n)) if len(t) > len(acts.time) else np.arange(len(t))
        self.time, self.item, self.node, self.how = t[o], i[o], n[o], h[o]
        self._names = None
        self.node_start = _node_spans(self.node)

    def names(self, inference):
        """The profile-wide name of each act's item (made on first use)."""
        if self._names is None:
            self._names = inference.names(self.item)
        return self._names

    def last_by(self, node, t):
        """Per query, the last action on ``node`` at or before ``t`` (its position, -1:
        none)."""
        out = np.full(len(t), -1, np.int64)
        for n in unique_values(node).tolist():
            span = self.node_start.get(int(n))
            if span is None:
                continue
            lo, hi = span
            q = np.flatnonzero(node == n)
            pos = lo + np.searchsorted(self.time[lo:hi], t[q], side="right") - 1
            pos = np.where(pos >= lo, pos, -1)
            out[q] = pos
        return out


class FastestMessages:
    """The least create − spawn of the messages from each node to each other: how much
    earlier, by the sender's clock, something there must have happened to be seen by then."""

    def __init__(self, parts):
        from legate_prof.causality.message_latency import message_columns
        spawn, create, node, creator = message_columns(parts)
        sender = event_node(creator).astype(np.int64)
        ok = (creator != 0) & (sender != node) & (spawn != NO_TIME)
        key = sender[ok] * (1 << 16) + node[ok]
        lag = create[ok] - spawn[ok]
        self.keys, self.lag = np.zeros(0, np.int64), np.zeros(0, np.int64)
        if len(key):
            o = lex_order((lag, key))
            first = np.r_[True, key[o][1:] != key[o][:-1]]
            self.keys, self.lag = key[o][first], lag[o][first]

    def shift(self, sender, receiver):
        """Per query, what to take off a receiver's time (0: same node, or no message)."""
        sender, receiver = np.asarray(sender, np.int64), np.asarray(receiver, np.int64)
        pos = find_sorted(self.keys, sender * (1 << 16) + receiver)
        return np.where((pos >= 0) & (sender != receiver), self.lag[np.maximum(pos, 0)], 0) \
            if len(self.keys) else np.zeros(len(sender), np.int64)


class Inference:
    """The rule over one profile's links (``critical_links.CriticalLinks``)."""

    def __init__(self, links):
        self.links = links
        self._actions = self._messages = self._habits = self._item_acts = None

    @property
    def actions(self):
        """What acted on each node (made on first use: a run with no unknown link needs
        none)."""
        if self._actions is None:
            self._actions = NodeActions(self.links)
        return self._actions

    @property
    def messages(self):
        if self._messages is None:
            self._messages = FastestMessages(self.links.parts or [])
        return self._messages

    def node_of(self, ids):
        """The node (rank) each item ran on."""
        lanes = self.links.values("lane", ids).astype(np.int64)
        out = np.zeros(len(ids), np.int64)
        for p_k, p in enumerate(self.links.parts or []):
            lo = p.item_off
            hi = lo + p.model.n_items
            sel = (np.asarray(ids) >= lo) & (np.asarray(ids) < hi)
            if sel.any():
                out[sel] = np.asarray(p.model.lanes["rank"], np.int64)[lanes[sel]]
        return out

    def names(self, ids):
        """The profile-wide name id of each item."""
        from legate_prof.model.item_parts import by_part
        parts = self.links.parts or []
        ids = np.asarray(ids, np.int64)
        out = np.zeros(len(ids), np.int64)
        if not parts or len(ids) == 0:
            return out
        offsets = np.array([p.item_off for p in parts]
                           + [parts[-1].item_off + parts[-1].model.n_items], np.int64)
        for k, sel, local in by_part(offsets, ids):
            out[sel] = parts[k].names(local)
        return out

    @property
    def habits(self):
        """``Habits`` of this run's known links (made on first use)."""
        if self._habits is None:
            self._habits = Habits(self)
        return self._habits

    def infer(self, waiter, ready, node, own_key=None):
        """(predecessor, when it acted) per waiter item that became ready at ``ready``
        waiting for an event of ``node`` (-1 / NO_TIME: none); ``own_key``: each row's own
        known link, not counted as a habit (``agreement``)."""
        waiter = np.asarray(waiter, np.int64)
        ready = np.asarray(ready, np.int64)
        node = np.asarray(node, np.int64)
        if len(waiter) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        own = self.node_of(waiter)
        by = ready - self.messages.shift(node, own)
        if self._item_acts is None:
            self._item_acts = ItemActs(self.links)
        acts = NodeActions(self.links, near=(node, by), item_acts=self._item_acts)
        pos = pick_by_habit(self, waiter, node, acts.last_by(node, by), own_key, acts)
        hit = pos >= 0
        target = np.where(hit, acts.item[np.maximum(pos, 0)], -1)
        trigger = np.where(hit, acts.time[np.maximum(pos, 0)], NO_TIME)
        return target, trigger

    def unknown_rows(self):
        """(Inferred for the item rows, Inferred for the wait rows): rows the reference
        leaves at an unknown event only (both inferred at once: one table of acts)."""
        L = self.links
        asks = []
        for rows, waiter, ready in (
                (L.items, None, None), (L.waits, L.wait_item, L.wait_ready)):
            k = np.flatnonzero(rows.via == VIA_UNKNOWN)
            w = k if waiter is None else np.asarray(waiter, np.int64)[k]
            r = L.ready(w) if ready is None else np.asarray(ready, np.int64)[k]
            asks.append((len(rows.via), k, w, r, rows.node[k].astype(np.int64)))
        if sum(len(k) for _, k, _, _, _ in asks):
            target, trigger = self.infer(*(np.concatenate([a[j] for a in asks])
                                           for j in (2, 3, 4)))
        out, at = [], 0
        for n, k, _, _, _ in asks:
            inf = Inferred.none(n)
            if len(k):
                inf.target[k], inf.trigger[k] = target[at:at + len(k)], trigger[at:at + len(k)]
                at += len(k)
            out.append(inf)
        return tuple(out)


# the rule's weights, measured on the runs in fixtures/real (docs/critical_path.md): how many
# acts back from the bound are weighed, what an act never seen triggering the waiter's kind
# counts as (against once seen, less the row itself), and how much each act further back
# costs on one node and across nodes (log-odds per act)
CANDIDATES = 32
UNSEEN = 0.1
STEP_COST_SAME_NODE = 1.0
STEP_COST_ACROSS = 0.1


def habit_key(waiter_name, name, how):
    """A (waiter's name, acting item's name, how it acted: an event kind) triple as one int."""
    return ((np.asarray(waiter_name, np.int64) << 32) | (np.asarray(name, np.int64) << 8)
            | np.asarray(how, np.int64))


class Habits:
    """What triggered which waiter in this run: the links the reference resolves through an
    event, counted by ``habit_key`` (a "Deferred Mapping Pipeline Stage" waits for a barrier
    a "Mapping Pipeline Stage" arrived at; a copy for a task's end …)."""

    def __init__(self, inference):
        L = inference.links
        keys = [np.zeros(0, np.int64)]
        for rows, waiter in ((L.items, None), (L.waits, L.wait_item)):
            k = np.flatnonzero((rows.via == VIA_EVENT) & (rows.target >= 0))
            w = k if waiter is None else np.asarray(waiter, np.int64)[k]
            keys.append(habit_key(inference.names(w), inference.names(rows.target[k]),
                                  rows.kind[k]))
        self.keys, self.counts = unique_with(np.concatenate(keys), counts=True)

    def count(self, keys):
        """How often each key was seen (0: never)."""
        if len(self.keys) == 0:
            return np.zeros(keys.shape, np.int64)
        pos = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return np.where(self.keys[pos] == keys, self.counts[pos], 0)


def pick_by_habit(inference, waiter, node, last, own_key=None, actions=None):
    """Of the ``CANDIDATES`` acts on ``node`` up to ``last`` (a position in the node's acts,
    -1: none), the likeliest trigger of each waiter: the log of how often an act of its
    name and way triggered the waiter's kind (``Habits``; ``own_key``: the row's own link,
    left out where the rule is checked against it) less a cost per act further back.
    (A ``len(waiter)`` × ``CANDIDATES`` array: linear in the rows.)  ``actions``: the
    ``NodeActions`` ``last`` is of (default: the whole run's)."""
    A = inference.actions if actions is None else actions
    back = np.arange(CANDIDATES)
    first = np.searchsorted(A.node, node, side="left")
    cand = last[:, None] - back[None, :]
    ok = (last[:, None] >= 0) & (cand >= first[:, None])
    cand = np.where(ok, cand, 0)
    named = inference.names(A.item[cand].ravel()).reshape(cand.shape)  # (the candidates')
    key = habit_key(inference.names(waiter)[:, None], named, A.how[cand])
    seen = inference.habits.count(key)
    if own_key is not None:
        seen = seen - (key == np.asarray(own_key, np.int64)[:, None])
    across = (node != inference.node_of(waiter))[:, None]
    cost = np.where(across, STEP_COST_ACROSS, STEP_COST_SAME_NODE) * back[None, :]
    score = np.where(ok, np.log(seen + UNSEEN) - cost, -np.inf)
    best = np.argmax(score, axis=1)  # (ties: the latest act)
    return np.where(last >= 0, cand[np.arange(len(last)), best], -1)


@dataclass(frozen=True)
class Agreement:
    """How often the rule names the item the reference links to, where it links through an
    event: over all such rows, and those whose event is of another node than the waiter."""

    rows: int
    agreed: int
    cross_node_rows: int
    cross_node_agreed: int

    @property
    def share(self):
        return self.agreed / self.rows if self.rows else 1.0

    @property
    def cross_node_share(self):
        return self.cross_node_agreed / self.cross_node_rows if self.cross_node_rows else 1.0

    def as_json(self):
        return {"rows": self.rows, "agreed": self.agreed, "share": round(self.share, 4),
                "cross_node_rows": self.cross_node_rows,
                "cross_node_agreed": self.cross_node_agreed,
                "cross_node_share": round(self.cross_node_share, 4)}


def agreement(links, inference=None) -> Agreement:
    """The rule tried on every link the reference resolves through an event to an item
    (hidden, then inferred from the waiter's ready time and the node of the item named)."""
    inference = inference or Inference(links)
    L = links
    rows_n = agreed = cross_n = cross_ok = 0
    for rows, waiter, ready in ((L.items, None, None), (L.waits, L.wait_item, L.wait_ready)):
        k = np.flatnonzero((rows.via == VIA_EVENT) & (rows.target >= 0))
        if len(k) == 0:
            continue
        w = k if waiter is None else np.asarray(waiter, np.int64)[k]
        r = L.ready(w) if ready is None else np.asarray(ready, np.int64)[k]
        truth = rows.target[k].astype(np.int64)
        node = inference.node_of(truth)
        own_key = habit_key(inference.names(w), inference.names(truth), rows.kind[k])
        got, _ = inference.infer(w, r, node, own_key)
        ok = got == truth
        cross = node != inference.node_of(w)
        rows_n += len(k)
        agreed += int(ok.sum())
        cross_n += int(cross.sum())
        cross_ok += int((ok & cross).sum())
    return Agreement(rows_n, agreed, cross_n, cross_ok)


__all__ = ["Inference", "Inferred", "Agreement", "agreement", "ACTING_KINDS", "Habits",
           "habit_key", "pick_by_habit"]
