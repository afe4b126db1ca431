"""Clock skew between nodes and slow messages, computed as the reference computes its two
warnings (``legion_prof``'s ``check_message_latencies``), said in our words.

A message (a ``MessageInfo`` meta-task) is sent at ``spawn`` by the sender's clock and
created at ``create`` by the receiver's.  One that "arrives before it was sent" (spawn >
create) shows the two clocks disagree: per (sending node, receiving node), the count, mean
and spread of that skew.  Latency is create − spawn after shifting the receiver's clock by
that pair's mean skew (truncated to ns, as the reference does); a message of 1 ms or more is
slow, and the network looks congested when at least 5 % of all messages are.  The sender is
the task, meta-task, message or profiler response whose event created the message, found in
any rank (a message whose sender is in no loaded rank counts in the totals only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legate_prof.model.event_tables import MARK_SPAWN
from legate_prof.model.kinds import ItemKind
from legate_prof.query.event_graph import find_sorted, first_of_runs

SLOW_MESSAGE_NS = 1_000_000  # the reference's --message-threshold (1000 us)
CONGESTED_PERCENT = 5.0  # its --message-percentage
SENDER_KINDS = (ItemKind.TASK, ItemKind.META, ItemKind.MESSAGE, ItemKind.PROF_TASK)


@dataclass(frozen=True)
class SkewPair:
    """Messages from ``sender`` to ``receiver`` node that arrived before they were sent:
    the receiver's clock appears ``mean_ns`` behind (population std dev ``spread_ns``)."""

    sender: int
    receiver: int
    messages: int
    mean_ns: float
    spread_ns: float


@dataclass(frozen=True)
class MessageLatency:
    messages: int  # all messages
    skewed: int  # sent after they were created, by the two nodes' clocks
    mean_skew_ns: float  # over the skewed ones
    pairs: tuple  # SkewPair, by (sender, receiver)
    slow: int  # latency >= threshold_ns, after the skew correction
    threshold_ns: int
    longest_ns: int  # the longest latency measured
    percent_slow: float  # of all messages

    @property
    def congested(self):
        return self.messages > 0 and self.percent_slow >= CONGESTED_PERCENT

    def as_json(self):
        return {"messages": self.messages, "skewed": self.skewed,
                "mean_skew_ns": round(self.mean_skew_ns, 3),
                "skew_pairs": [{"sender": p.sender, "receiver": p.receiver,
                                "messages": p.messages, "mean_ns": round(p.mean_ns, 3),
                                "spread_ns": round(p.spread_ns, 3)} for p in self.pairs],
                "slow": self.slow, "threshold_ns": self.threshold_ns,
                "percent_slow": round(self.percent_slow, 3), "longest_ns": self.longest_ns,
                "congested": self.congested}

    def notices(self):
        """Plain sentences for a banner: what a user comparing boxes across nodes must know."""
        out = []
        if self.skewed:
            behind = "; ".join(
                f"node {p.receiver}'s clock reads {p.mean_ns / 1e3:.3f} µs behind node "
                f"{p.sender}'s (±{p.spread_ns / 1e3:.3f} µs, {_n(p.messages, 'message')})"
                for p in self.pairs)
            out.append(f"Clock skew: {self.skewed} of {self.messages} messages arrived before "
                       f"they were sent, by the nodes' clocks (by {self.mean_skew_ns / 1e3:.2f}"
                       f" µs on average)" + (f": {behind}" if behind else "")
                       + ". Boxes on different nodes may be shifted against each other.")
        if self.congested:
            out.append(f"Slow network: {self.slow} of {self.messages} messages "
                       f"({self.percent_slow:.2f} %) took {self.threshold_ns / 1e6:g} ms or "
                       f"more to arrive; the slowest {self.longest_ns / 1e6:.3f} ms. The "
                       "network was likely congested.")
        return tuple(out)


def message_latency(parts, threshold_ns=SLOW_MESSAGE_NS) -> MessageLatency:
    """Skew and latency of the messages of ``parts`` (a profile's ``item_parts()``)."""
    spawn, create, node, creator = message_columns(parts)
    return latency_of(spawn, create, node, _sender_nodes(parts, creator), threshold_ns)


def latency_by_event_ids(spawn, create, node, creator, ranks,
                         threshold_ns=SLOW_MESSAGE_NS) -> MessageLatency:
    """``message_latency`` of messages gathered rank by rank (``message_columns`` of each),
    without the ranks' items: a sender's node read from its creator event's id — Realm makes
    an entry's event on the node that runs it — when that node's rank is among ``ranks``
    (the same as the lookup on every recorded run, whole or partial)."""
    from legate_prof.assemble.event_records import event_node
    creator = np.asarray(creator, np.uint64)
    nodes = event_node(creator)
    sender = np.where((creator != 0) & np.isin(nodes, list(ranks)), nodes, -1)
    return latency_of(np.asarray(spawn, np.int64), np.asarray(create, np.int64),
                      np.asarray(node, np.int64), sender, threshold_ns)


def latency_of(spawn, create, node, sender, threshold_ns=SLOW_MESSAGE_NS) -> MessageLatency:
    """The skew and latency of messages given by columns (``sender``: node, -1 unknown)."""
    total = len(spawn)
    skewed = spawn > create
    skew = (spawn - create).astype(np.float64)
    pairs = []
    shift = np.zeros(total, np.int64)
    known = skewed & (sender >= 0)
    keys = sender[known] * (1 << 20) + node[known]
    for k in np.unique(keys).tolist():
        v = skew[known][keys == k]
        mean = float(v.mean())
        s, r = k >> 20, k & ((1 << 20) - 1)
        pairs.append(SkewPair(int(s), int(r), len(v), mean,
                              float(np.sqrt(((v - mean) ** 2).sum() / len(v)))))
        shift[(sender == s) & (node == r)] = int(mean)
    shifted = create + shift
    ok = (sender >= 0) & (spawn <= shifted)
    latency = (shifted - spawn)[ok]
    slow = int(np.count_nonzero(latency >= threshold_ns))
    return MessageLatency(
        messages=total, skewed=int(skewed.sum()),
        mean_skew_ns=float(skew[skewed].mean()) if skewed.any() else 0.0, pairs=tuple(pairs),
        slow=slow, threshold_ns=int(threshold_ns),
        longest_ns=int(latency.max()) if len(latency) else 0,
        percent_slow=100.0 * slow / total if total else 0.0)


def message_columns(parts):
    """spawn, create, receiving node and creator event of every message with a spawn time."""
    cols = {k: [] for k in ("spawn", "create", "node", "creator")}
    for p in parts:
        it = p.model.items
        msg = np.flatnonzero(it["kind"] == ItemKind.MESSAGE)
        if len(msg) == 0:
            continue
        marks = p.model.events["marks"]
        sel = np.flatnonzero(marks["mark"] == MARK_SPAWN)
        o = sel[np.argsort(marks["event"][sel], kind="stable")]
        keys = marks["event"][o]
        pos = find_sorted(keys, it["fevent"][msg])
        has = pos >= 0
        msg, pos = msg[has], pos[has]
        cols["spawn"].append(marks["time"][o][pos])
        cols["create"].append(it["create"][msg])
        cols["node"].append(p.model.lanes["rank"][it["lane"][msg]].astype(np.int64))
        cols["creator"].append(it["creator"][msg])
    dtypes = {"spawn": np.int64, "create": np.int64, "node": np.int64, "creator": np.uint64}
    return tuple(np.concatenate(cols[k]).astype(dt) if cols[k] else np.zeros(0, dt)
                 for k, dt in dtypes.items())


def _sender_nodes(parts, creator):
    """The node of the processor each creator event's entry ran on (-1: not found), the
    first rank's entry where two claim it."""
    out = np.full(len(creator), -1, np.int64)
    if len(creator) == 0:
        return out
    wanted = np.sort(creator)
    wanted = wanted[first_of_runs(wanted)]
    for p in parts:  # one pass over each rank's entries: no index of all items
        it = p.model.items
        table = np.zeros(256, bool)
        table[[int(k) for k in SENDER_KINDS]] = True
        entries = np.flatnonzero(table[it["kind"]])
        pos = find_sorted(wanted, it["fevent"][entries])
        hit = pos >= 0
        ranks = p.model.lanes["rank"][it["lane"][entries[hit]]].astype(np.int64)
        found = np.full(len(wanted), -1, np.int64)
        found[pos[hit][::-1]] = ranks[::-1]  # (the first of an event's entries wins)
        q = find_sorted(wanted, creator)
        take = (out < 0) & (q >= 0)
        out[take] = found[q[take]]
    return out


__all__ = ["MessageLatency", "SkewPair", "message_latency", "SLOW_MESSAGE_NS"]


def _n(count, noun):
    return f"{count} {noun}" + ("" if count == 1 else "s")
