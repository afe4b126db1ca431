"""Past the events Legion does not record (``causality.inference``): the rule tried where the
answer is known, on every real multi-rank run in the repository, and what the run's path
makes of an inferred link.  The reference's own links are not touched (``test_critical_path``
compares them item by item)."""

from __future__ import annotations

import numpy as np
import pytest

from fixtures.make_critical_goldens import REAL
from legate_prof.causality.inference import Inference, agreement
from legate_prof.causality.link_rules import VIA_UNKNOWN
from legate_prof.load.loader import load_profile
from legate_prof.query import as_source

# agreement measured with the rule as it is (docs/critical_path.md), a point of slack:
# (all rows, rows whose event is of another node than the waiter).  The rule by recency
# alone got 0.77-0.85 and 0.58-0.78 across nodes on the same runs (loops3: 0.77, 0.51);
# loops3 was not looked at while the weights were chosen.
MEASURED = {"mpi2": (0.92, 0.88), "mpi2b": (0.91, 0.89), "mpi2_util2": (0.92, 0.86),
            "mpi2_utility2": (0.93, 0.89), "mpi2_copies": (0.91, 0.87), "mpi3": (0.94, 0.93),
            "mpi4": (0.94, 0.91), "loops3": (0.92, 0.90), "inefficient_1rank": (0.95, 1.0),
            "efficient_1rank": (0.96, 1.0)}


def _source(run):
    return as_source(load_profile([REAL / run], stack=False, ranked=True, workers=1))


@pytest.mark.parametrize("run", sorted(MEASURED))
def test_the_rule_names_the_known_predecessor_as_often_as_measured(run):
    """Every link the reference resolves through an event to an item, hidden and inferred
    from the waiter's ready time and the node of the item named: the share the rule gets
    right does not fall below what docs/critical_path.md states: >= 90 % of all links on
    every run, >= 85 % across nodes (where the network's delay lets several acts come
    between the trigger and the waiter; the run's habits say which of them it was)."""
    links = _source(run).critical_links()
    got = agreement(links)
    whole, cross = MEASURED[run]
    assert got.rows > 100
    assert got.share >= whole - 0.01, got
    assert got.cross_node_share >= cross - 0.01, got
    same = (got.agreed - got.cross_node_agreed) / max(got.rows - got.cross_node_rows, 1)
    assert same >= 0.90, got
    assert got.share >= 0.90, got


def test_a_waiter_of_a_kind_no_known_link_names_gets_the_last_act_before_it_was_ready():
    """Where the run's known links say nothing of what triggers a waiter of its name (the
    waiters of mpi4's unknown events: shutdown, index spaces, startup messages …), the
    inferred link is what last acted on the event's node by the bound — the rule by recency,
    checked here apart from the scoring."""
    links = _source("mpi4").critical_links()
    inference = Inference(links)
    items, waits = links.inferred()
    seen_waiters = set((inference.habits.keys >> 32).tolist())
    checked = 0
    for rows, inf, waiter, ready in ((links.items, items, None, None),
                                     (links.waits, waits, links.wait_item, links.wait_ready)):
        for k in np.flatnonzero(inf.target >= 0).tolist():
            w = k if waiter is None else int(waiter[k])
            if int(inference.names([w])[0]) in seen_waiters:
                continue
            r = int(links.values("ready", [w])[0]) if ready is None else int(ready[k])
            node = int(rows.node[k])
            bound = r - int(inference.messages.shift([node], inference.node_of([w]))[0])
            acts = inference.actions
            mine = np.flatnonzero((acts.node == node) & (acts.time <= bound))
            assert int(inf.target[k]) == int(acts.item[mine[-1]])
            checked += 1
    assert checked >= 10


def test_an_inferred_link_acted_on_the_events_node_before_the_waiter_was_ready():
    """Each inferred predecessor, checked apart from the rule's code: an item of the node the
    event's id names, that ended or performed an event record at the time given, no later
    than the waiter became ready (moved by the fastest message between the two nodes)."""
    src = _source("mpi4")
    links = src.critical_links()
    items, waits = links.inferred()
    inference = Inference(links)
    checked = 0
    for rows, inf, waiter, ready in ((links.items, items, None, None),
                                     (links.waits, waits, links.wait_item, links.wait_ready)):
        for k in np.flatnonzero(inf.target >= 0).tolist():
            assert rows.via[k] == VIA_UNKNOWN  # (only where the reference stops)
            t, when = int(inf.target[k]), int(inf.trigger[k])
            w = k if waiter is None else int(waiter[k])
            r = int(links.values("ready", [w])[0]) if ready is None else int(ready[k])
            node = int(rows.node[k])
            f = src.item_facts(t)
            assert f["rank"] == node
            shift = int(inference.messages.shift([node], [src.item_facts(w)["rank"]])[0])
            assert when <= r - shift
            assert when == f["stop_ns"] or f["start_ns"] <= when <= f["stop_ns"], (f, when)
            checked += 1
    assert checked >= 10


def test_the_runs_path_goes_on_past_an_unknown_event_marked_inferred(capsys):
    """mpi3's path stopped at an event of rank 2 no profile records (734 ms of a 2.88 s
    run); with the inferred link it goes on to the top-level task's start, and the step
    says so in the JSON."""
    from legate_prof.cli import main
    import json
    assert main(["critical", "--json", str(REAL / "mpi3")]) == 0
    doc = json.loads(capsys.readouterr().out)
    vias = [p["via"] for p in doc["path"]]
    assert "inferred" in vias and "unknown" not in vias
    assert doc["stops_at"] is None
    assert doc["path"][-1]["name"] == "Toplevel Task"
    assert doc["span_ns"] >= 2.2e9  # (was 734 ms)


@pytest.mark.parametrize("run", ["mpi4", "loops3", "inefficient_1rank"])
def test_inferring_from_the_acts_near_the_asks_names_what_the_whole_runs_acts_do(run):
    """``infer`` resolves only the event records that can be among an ask's candidates
    (``NodeActions(near=...)``: most of a run's records are not); for every ask — the
    unknown rows, and every known link hidden as ``agreement`` asks — its ``CANDIDATES``
    acts are those of the whole run's table of acts, and so is the predecessor named."""
    from legate_prof.causality.inference import CANDIDATES, NodeActions, pick_by_habit
    from legate_prof.causality.link_rules import VIA_EVENT
    from legate_prof.model.event_tables import NO_TIME
    links = _source(run).critical_links()
    inference = Inference(links)
    whole = inference.actions
    asked = 0
    for rows, waiter, ready in ((links.items, None, None),
                                (links.waits, links.wait_item, links.wait_ready)):
        k = np.flatnonzero((rows.via == VIA_UNKNOWN) | ((rows.via == VIA_EVENT)
                                                        & (rows.target >= 0)))
        w = k if waiter is None else np.asarray(waiter, np.int64)[k]
        r = links.values("ready", w) if ready is None else np.asarray(ready, np.int64)[k]
        node = np.where(rows.via[k] == VIA_UNKNOWN, rows.node[k].astype(np.int64),
                        inference.node_of(np.maximum(rows.target[k], 0)))
        by = np.asarray(r, np.int64) - inference.messages.shift(node, inference.node_of(w))
        near = NodeActions(links, near=(node, by))
        for table in (whole, near):
            last = table.last_by(node, by)
            first = np.searchsorted(table.node, node)
            back = last[:, None] - np.arange(CANDIDATES)[None, :]
            ok = (last[:, None] >= 0) & (back >= first[:, None])
            at = np.maximum(np.where(ok, back, 0), 0)
            table.candidates = [np.where(ok, col[at], -1) for col in
                                (table.item, table.time, table.how)]
        for a, b in zip(whole.candidates, near.candidates):
            assert np.array_equal(a, b)
        got = inference.infer(w, r, node)
        pos = pick_by_habit(inference, w, node, whole.last_by(node, by))
        want = (np.where(pos >= 0, whole.item[np.maximum(pos, 0)], -1),
                np.where(pos >= 0, whole.time[np.maximum(pos, 0)], NO_TIME))
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        asked += len(k)
    assert len(near.time) < len(whole.time)  # (what is left out is the point)
    assert asked > 100
