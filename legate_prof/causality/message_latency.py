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
from legate_prof.model.sort_order import stable_order
from legate_prof.present.units import format_ns
from legate_prof.causality.event_graph import find_sorted, first_of_runs

SLOW_MESSAGE_NS = 1_000_000  # the reference's --message-threshold (1000 us)
CONGESTED_PERCENT = 5.0  # its --message-percentage
SENDER_KINDS = (ItemKind.TASK, ItemKind.META, ItemKind.MESSAGE, ItemKind.PROF_TASK)
NAMED_PAIRS = 3  # pairs of nodes a notice names (the clocks furthest apart)


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
    # the one machine every rank ran on ("": several, or not said): no network between them
    one_host: str = ""
    # messages whose sender's rank was read, their latency measured (-1: all of them); a
    # rank read alone (--ranks) receives messages whose senders are not
    measured: int = -1

    @property
    def congested(self):
        return self.messages > 0 and self.percent_slow >= CONGESTED_PERCENT

    @property
    def clocks_apart_ns(self):
        """How far apart two nodes' clocks read at most: the largest pair's mean skew (0:
        no skewed message)."""
        return max((abs(p.mean_ns) for p in self.pairs), default=0.0)

    @property
    def clocks_make_latencies(self):
        """Whether the nodes' clocks, not the messages, make the latencies: two clocks read
        further apart than a slow message takes, and by half the slowest latency or more.
        Then "slow messages" are the clocks' offset (a run with a clock 100 s off read as
        "a message waited for its rank's threads to get a core").  Never without a skewed
        message: no clock is then seen apart."""
        return bool(self.skewed) and self.clocks_apart_ns >= max(self.threshold_ns,
                                                                 self.longest_ns / 2)

    @property
    def clocks_offset_ns(self):
        """How far apart the clocks read where they make the latencies
        (``clocks_make_latencies``), else 0: what a run's length holds that the program did
        not spend (``compare``'s verdict, ``insights``' first line)."""
        return int(self.clocks_apart_ns) if self.clocks_make_latencies else 0

    def worst_pairs(self, most):
        """The ``most`` pairs whose clocks read furthest apart (``worst_first``): what a
        sentence names of the run's pairs — at 1,000 ranks there were 52,405, and the notice
        naming each was 3.7 MB long."""
        return worst_first(self.pairs)[:most]

    def as_json(self):
        return {"messages": self.messages, "skewed": self.skewed,
                "mean_skew_ns": round(self.mean_skew_ns, 3),
                "skew_pairs": [{"sender": p.sender, "receiver": p.receiver,
                                "messages": p.messages, "mean_ns": round(p.mean_ns, 3),
                                "spread_ns": round(p.spread_ns, 3)} for p in self.pairs],
                "slow": self.slow, "threshold_ns": self.threshold_ns,
                "percent_slow": round(self.percent_slow, 3), "longest_ns": self.longest_ns,
                "congested": self.congested, "one_host": self.one_host or None,
                "latencies_are_clocks": self.clocks_make_latencies,
                "measured": self.messages if self.measured < 0 else self.measured}

    def notices(self):
        """Plain sentences for a banner: what a user comparing boxes across ranks must know
        (a rank is a Legion node: its own process, its own clock)."""
        out = []
        if self.skewed:
            behind = "; ".join(
                f"rank {p.receiver}'s clock reads {format_ns(p.mean_ns)} behind rank "
                f"{p.sender}'s (±{format_ns(p.spread_ns)}, {_n(p.messages, 'message')})"
                for p in self.worst_pairs(NAMED_PAIRS))
            more = len(self.pairs) - NAMED_PAIRS
            if more > 0:
                behind += (f"; {more:,} more pair{'s' if more > 1 else ''} of ranks "
                           "(`legate_prof stats --json` lists each)")
            out.append(f"Clock skew: {self.skewed:,} of {self.messages:,} messages arrived before "
                       f"they were sent, by the ranks' clocks (by {format_ns(self.mean_skew_ns)}"
                       f" on average)" + (f": {behind}" if behind else "") + "."
                       + (f" Every rank ran on one machine ({self.one_host}): their clocks "
                          "started apart, not the machines'." if self.one_host else "")
                       + " Boxes on different ranks may be shifted against each other.")
        if self.congested and self.clocks_make_latencies:
            out.append(f"Slow messages measure the clocks: {self.slow:,} of {self.messages:,} "
                       f"messages took {self.threshold_ns / 1e6:g} ms or more, the slowest "
                       f"{format_ns(self.longest_ns)}, while two ranks' clocks read "
                       f"{format_ns(self.clocks_apart_ns)} apart: times across ranks are off "
                       "by that, not the messages slow.")
        elif self.congested and self.one_host:
            out.append(f"Slow messages: {self.slow:,} of {self.messages:,} messages "
                       f"({self.percent_slow:.2f} %) took {self.threshold_ns / 1e6:g} ms or "
                       f"more to arrive; the slowest {format_ns(self.longest_ns)}. Every rank "
                       f"ran on one machine ({self.one_host}), so no network is slow: a message "
                       "waits for its rank's threads to get a core.")
        elif self.congested:
            out.append(f"Slow network: {self.slow:,} of {self.messages:,} messages "
                       f"({self.percent_slow:.2f} %) took {self.threshold_ns / 1e6:g} ms or "
                       f"more to arrive; the slowest {format_ns(self.longest_ns)}. The "
                       "network was likely congested.")
        return tuple(out)


def worst_first(pairs):
    """Skew pairs (``SkewPair``s, or their JSON) whose clocks read furthest apart first, then
    those of more messages, then by sender and receiver."""
    def key(p):
        get = p.get if isinstance(p, dict) else lambda k: getattr(p, k)
        return -abs(get("mean_ns")), -get("messages"), get("sender"), get("receiver")
    return sorted(pairs, key=key)


def one_host(ranks):
    """The machine every one of ``ranks`` (a model's rank records) ran on, where there are
    several ranks and all name the same one; else ""."""
    hosts = {str(r.get("hostname") or "") for r in ranks}
    return next(iter(hosts)) if len(ranks) > 1 and len(hosts) == 1 else ""


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
    pairs, means = _skew_pairs(skew, skewed, sender, node)
    shift = np.zeros(total, np.int64)
    if pairs:  # (each message between a pair's nodes: shifted by the pair's mean)
        keys = np.array([p.sender * _PAIR + p.receiver for p in pairs], np.int64)
        has = np.flatnonzero(sender >= 0)
        pos = find_sorted(keys, (sender[has] * _PAIR + node[has]).astype(np.int64))
        hit = pos >= 0
        shift[has[hit]] = means[pos[hit]]
    shifted = create + shift
    ok = (sender >= 0) & (spawn <= shifted)
    latency = (shifted - spawn)[ok]
    slow = int(np.count_nonzero(latency >= threshold_ns))
    return MessageLatency(
        messages=total, skewed=int(skewed.sum()),
        mean_skew_ns=float(skew[skewed].mean()) if skewed.any() else 0.0, pairs=tuple(pairs),
        slow=slow, threshold_ns=int(threshold_ns),
        longest_ns=int(latency.max()) if len(latency) else 0,
        percent_slow=100.0 * slow / total if total else 0.0,
        measured=int(np.count_nonzero(sender >= 0)))


_PAIR = 1 << 20  # (a pair's key: sender * _PAIR + receiver)


def _skew_pairs(skew, skewed, sender, node):
    """(``SkewPair`` of each (sender, receiver) with skewed messages of a known sender, by
    key; each one's mean truncated to ns): one sort of the skewed messages, each pair's skews
    then a slice in the messages' order (its mean and spread summed as over the pair alone)."""
    known = np.flatnonzero(skewed & (sender >= 0))
    keys = sender[known] * _PAIR + node[known]
    o = stable_order(keys)
    keys, v_all = keys[o], skew[known[o]]
    first = np.flatnonzero(first_of_runs(keys))
    if len(first) == 0:
        return [], np.zeros(0, np.int64)
    count = np.diff(np.append(first, len(keys)))
    # each pair's mean and spread over its slice, all pairs at once (a loop over 52,405
    # pairs at 1,000 ranks was 0.7 s a call)
    mean = np.add.reduceat(v_all, first) / count
    dev = v_all - np.repeat(mean, count)
    spread = np.sqrt(np.add.reduceat(dev * dev, first) / count)
    k = keys[first]
    pairs = [SkewPair(*row) for row in zip((k >> 20).tolist(), (k & (_PAIR - 1)).tolist(),
                                           count.tolist(), mean.tolist(), spread.tolist())]
    return pairs, mean.astype(np.int64)


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
        o = sel[stable_order(marks["event"][sel])]
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
    found = np.full(len(wanted), -1, np.int64)  # (the first rank's, by wanted event)
    table = np.zeros(256, bool)
    table[[int(k) for k in SENDER_KINDS]] = True
    for p in parts:  # one pass over each rank's entries: no index of all items
        it = p.model.items
        entries = np.flatnonzero(table[it["kind"]])
        pos = find_sorted(wanted, it["fevent"][entries])
        hit = np.flatnonzero(pos >= 0)
        here = np.full(len(wanted), -1, np.int64)
        here[pos[hit][::-1]] = hit[::-1]  # (the first of an event's entries here wins)
        new = np.flatnonzero((found < 0) & (here >= 0))
        found[new] = p.model.lanes["rank"][it["lane"][entries[here[new]]]]
    q = find_sorted(wanted, creator)  # (-1: no event)
    out[q >= 0] = found[q[q >= 0]]
    return out


__all__ = ["MessageLatency", "SkewPair", "message_latency", "worst_first", "SLOW_MESSAGE_NS"]


def _n(count, noun):
    return f"{count:,} {noun}" + ("" if count == 1 else "s")
