"""Critical links rank by rank (``causality.rank_links``) equal one pass over all ranks
(``critical_links.link_whole``, which the goldens check against the reference): every item's
and every wait's row, creation time, the item that ended last and the graph's size — on every
recorded multi-rank run held as a ``RankSet``, on ranks missing, on generated runs, and on
damaged graphs where the ranks cannot be joined (then it is the whole pass)."""

import itertools

import numpy as np
import pytest

from fixtures.make_critical_goldens import REAL, rank_files
from legate_prof.assemble.rank_set import RankSet
from legate_prof.load.loader import load_profile
from legate_prof.causality.critical_links import LinkRows, compute_links, link_whole
from legate_prof.causality.rank_links import RankPass, link_ranks, nodes_of

# (a run that crashed before Legion wrote a timeline, ``crashed.txt``, has nothing to link)
MULTI = [d for d in sorted(REAL.iterdir()) if d.is_dir() and len(rank_files(d)) > 1
         and not (d / "crashed.txt").exists()]


def rank_models(run):
    return [load_profile([str(f)], check_files=False) for f in rank_files(run)]


def assert_same_links(parts):
    whole, ranked = link_whole(parts), compute_links(parts)
    for name in ("items", "waits"):
        a, b = getattr(whole, name), getattr(ranked, name)
        for f in LinkRows.FIELDS:
            x, y = getattr(a, f).astype(np.int64), getattr(b, f).astype(np.int64)
            assert np.array_equal(x, y), (name, f, np.flatnonzero(x != y)[:5])
    assert np.array_equal(whole.creation, ranked.creation)
    for c in ("wait_item", "wait_start", "wait_ready", "wait_end", "wait_event"):
        assert np.array_equal(getattr(whole, c), getattr(ranked, c)), c
    assert whole.last == ranked.last
    assert (whole.has_data, whole.cycle, whole.n_vertices, whole.n_edges) == \
        (ranked.has_data, ranked.cycle, ranked.n_vertices, ranked.n_edges)
    return whole, ranked


@pytest.mark.parametrize("run", MULTI, ids=[d.name for d in MULTI])
def test_ranks_linked_alone_then_joined_equal_one_pass(run):
    parts = RankSet(rank_models(run)).item_parts()
    assert link_ranks(parts) is not None  # (joined, not fallen back)
    whole, _ = assert_same_links(parts)
    n = len(whole.items.via)
    assert (whole.items.via >= 0).sum() > min(500, n // 2)  # (mpi2_idle_cpu: 587 items)
    # much rests on other ranks in a real run: creators, remote triggers, barriers
    passes = [RankPass(p, nodes_of(p.model)).link() for p in parts]
    assert all(0 < len(rp.residual.items) < p.model.n_items for rp, p in zip(passes, parts))


def test_some_ranks_missing_link_as_one_pass():
    """What waited on a rank not given is unknown either way, and so is its creator."""
    models = rank_models(REAL / "mpi4")
    for given in itertools.combinations(range(4), 2):
        parts = RankSet([models[k] for k in given]).item_parts()
        assert link_ranks(parts) is not None
        assert_same_links(parts)


def test_generated_ranks_link_as_one_pass(tmp_path):
    from fixtures.synthetic import generate
    files = generate(tmp_path / "g", ranks=3, items=12000, seed=7)
    parts = RankSet([load_profile([f], check_files=False) for f in files]).item_parts()
    whole, _ = assert_same_links(parts)
    assert whole.has_data and (whole.items.via >= 0).sum() > 8000


def _with_events(model, records=None, edges=None):
    """``model`` with event records and edges added to its own."""
    from legate_prof.model.event_tables import concat_event_tables, event_table
    add = {"records": event_table("records", **(records or {})),
           "edges": event_table("edges", **(edges or {})), "marks": event_table("marks")}
    return model.evolve(events=concat_event_tables([model.events, add]))


def test_damaged_graphs_across_ranks_fall_back_to_one_pass():
    """A cycle through two ranks, and a rank's record of an event another rank made and
    closed: only one pass over all ranks knows what the reference does."""
    from legate_prof.model.event_tables import MERGE_EVENT
    m0, m1 = rank_models(REAL / "mpi2b")

    def closed_merge(m, k):
        rec = m.events["records"]
        made = rec["result"][rec["kind"] == MERGE_EVENT]
        closed = RankPass(RankSet([m0, m1]).item_parts()[k], [k]).tables.closed.keys
        return int(made[np.isin(made, closed)][0])
    a, b = closed_merge(m0, 0), closed_merge(m1, 1)
    cyc0 = _with_events(m0, edges={"src": [b], "dst": [a], "update": 0})
    cyc1 = _with_events(m1, edges={"src": [a], "dst": [b], "update": 0})
    twice = _with_events(m1, records={"kind": MERGE_EVENT, "result": [a], "creator": [b],
                                      "time": 5})
    for parts in (RankSet([cyc0, cyc1]).item_parts(), RankSet([m0, twice]).item_parts()):
        assert link_ranks(parts) is None
        whole, ranked = assert_same_links(parts)
    assert whole.has_data and not whole.cycle


def test_calls_are_ordered_as_the_four_key_lexsort_orders_them():
    """The call index's order (callers sorted, only calls sharing a caller lexsorted) is
    exactly ``np.lexsort((calls, -stop, start, caller))``: few shared callers, most shared,
    equal starts and stops, none shared."""
    from legate_prof.causality.call_index import _call_order
    rng = np.random.default_rng(11)
    for n, callers, ties in ((2000, 1900, 50), (2000, 300, 50), (2000, 2000, 5),
                             (5000, 4000, 3), (1, 1, 1), (0, 1, 1)):
        calls = rng.permutation(10 * n + 1)[:n].astype(np.int64)
        caller = rng.integers(0, callers, n).astype(np.uint64)
        start = rng.integers(0, ties, n).astype(np.int64)
        stop = start + rng.integers(0, ties, n)
        want = np.lexsort((calls, -stop, start, caller))
        assert np.array_equal(_call_order(calls, caller, start, stop), want)
    # as a run's calls lie (item order: a processor's calls by start), where the sort by
    # caller alone gives the order, and where one tie or one call out of place spoils it
    for n, callers in ((3000, 40), (3000, 2500), (50, 3)):
        calls = np.sort(rng.permutation(4 * n)[:n]).astype(np.int64)
        caller = np.sort(rng.integers(0, callers, n)).astype(np.uint64)[rng.permutation(n)]
        start = np.sort(rng.integers(0, n // 2, n)).astype(np.int64)
        stop = start + 5
        for spoil in (None, "longer later", "earlier start", "same, earlier id"):
            s, e, c = start.copy(), stop.copy(), calls.copy()
            k = int(np.flatnonzero((s[1:] == s[:-1]) & (caller[1:] == caller[:-1]))[0]) + 1 \
                if spoil else 0
            if spoil == "longer later":
                e[k] += 3
            elif spoil == "earlier start":
                s[k] -= 1
            elif spoil == "same, earlier id":
                c[k - 1], c[k] = c[k], c[k - 1]
            want = np.lexsort((c, -e, s, caller))
            assert np.array_equal(_call_order(c, caller, s, e), want), (n, spoil)


def test_lookups_of_many_events_find_what_a_binary_search_finds():
    """Above ``SORT_QUERIES_ABOVE`` queries among many keys, event lookups place them by one
    merge with the
    keys: the positions and hits are those of ``np.searchsorted``, sorted queries or not,
    with absent ids, repeats and 0 (no event: never found)."""
    from legate_prof.causality.event_graph import SORT_QUERIES_ABOVE, find_sorted
    from legate_prof.model.sort_order import SORTED_SEARCH_KEYS
    rng = np.random.default_rng(5)
    n = max(SORT_QUERIES_ABOVE, SORTED_SEARCH_KEYS) + 1000
    keys = np.unique(rng.integers(0, 4 * n, n, dtype=np.uint64))
    keys[0] = 0
    for query in (np.sort(rng.integers(0, 4 * n + 10, n, dtype=np.uint64)),
                  rng.integers(0, 4 * n + 10, n, dtype=np.uint64),
                  np.repeat(keys[::2], 2)):
        pos = np.minimum(np.searchsorted(keys, query), len(keys) - 1)
        want = np.where((keys[pos] == query) & (query != 0), pos, -1)
        assert np.array_equal(find_sorted(keys, query), want)


def test_the_graph_carries_the_item_a_lookup_of_each_critical_creator_finds():
    """An item's completion vertex carries its item (``EventGraph.item``), and the critical
    links read it instead of looking the creator up again: on every recorded multi-rank run,
    the carried item is what ``find`` gives, and the links equal those of a lookup of all."""
    from legate_prof.model.item_parts import ItemPart
    from legate_prof.causality.link_rules import Resolver, critical_entry
    for run in MULTI:
        for f in rank_files(run):
            m = load_profile([str(f)], check_files=False)
            rp = RankPass(ItemPart(m, 0, 0, None, None), nodes_of(m))
            g, items = rp.graph, rp.items
            v = np.flatnonzero(g.by_item)
            assert np.array_equal(g.item[v], items.find(g.events[v]))
            assert (g.item[~g.by_item] == -1).all()
            pre = np.asarray(m.items["critical"], np.uint64)
            entry = critical_entry(g, items.completions, pre)
            known = np.flatnonzero(entry.item >= 0)
            assert np.array_equal(entry.item[known], items.find(entry.creator[known]))
            res, k = Resolver(items), np.flatnonzero(entry.known)
            carried = res.critical_link(entry.take(k), pre[k])
            plain = entry.take(k)
            plain.item = None
            for a, b in zip(carried, res.critical_link(plain, pre[k])):
                assert np.array_equal(a, b)


def test_a_level_of_many_finds_the_vertices_its_last_sources_feed():
    """Kahn's next level, by the CSR ranges of the level's vertices or (a level of many) by
    a mask of them: the vertices whose last source was in the level, sorted, and the
    counts left, as a plain count gives them — with repeated edges and no edges."""
    from legate_prof.causality.event_graph import _next_level
    rng = np.random.default_rng(3)
    for nv, ne in ((1000, 3000), (1000, 200), (50, 0), (2000, 2000)):
        src, dst = rng.integers(0, nv, ne), rng.integers(0, nv, ne)
        o = np.argsort(src, kind="stable")
        out = (dst[o].astype(np.intp), np.concatenate([[0], np.cumsum(np.bincount(
            src, minlength=nv))]), src[o].astype(np.intp))
        for size in (1, 10, nv // 3, nv):
            frontier = np.sort(rng.choice(nv, size, replace=False))
            remaining = np.bincount(dst, minlength=nv) + rng.integers(0, 2, nv)
            want_left = remaining - np.bincount(dst[np.isin(src, frontier)], minlength=nv)
            fed = np.isin(np.arange(nv), dst[np.isin(src, frontier)])
            want = np.flatnonzero(fed & (want_left == 0))
            got = _next_level(out, frontier, remaining, nv)
            assert np.array_equal(got, want) and np.array_equal(remaining, want_left)


def test_queries_grouped_by_rank_as_a_search_per_rank_groups_them():
    """``positions_by_part`` (one radix sort of the rank numbers) gives each rank present, in
    order, with the positions a pass over the rank numbers finds (-1: no rank, left out)."""
    from legate_prof.model.item_parts import positions_by_part
    rng = np.random.default_rng(3)
    for n, ranks in ((0, 3), (1, 1), (50, 1), (1000, 4), (5000, 70000)):
        for part in (rng.integers(-1, ranks, n), np.full(n, ranks - 1),
                     np.sort(rng.integers(-1, ranks, n))):
            want = [(k, np.flatnonzero(part == k)) for k in np.unique(part[part >= 0]).tolist()]
            got = positions_by_part(part, ranks)
            assert [k for k, _ in got] == [k for k, _ in want]
            for (_, a), (_, b) in zip(got, want):
                assert np.array_equal(a, b)


def _brute_prev_greater(index):
    n = len(index.items)
    sizes = np.diff(np.append(index.group_start, n))
    lo = np.repeat(index.group_start, sizes)
    out = np.full(n, -1)
    for i in range(n):
        for j in range(i - 1, lo[i] - 1, -1):
            if index.stop[j] > index.stop[i]:
                out[i] = j
                break
    return out


def test_call_index_answers_as_a_scan_does_on_any_shape():
    """``CallIndex``: each call's previous call (of its entry) that stops later, and the
    innermost call running at t, equal a scan back over every call — calls nested, in a
    row, sharing one interval, overlapping without nesting (damaged input)."""
    from legate_prof.causality.call_index import CallIndex
    rng = np.random.default_rng(11)
    for trial in range(200):
        n = int(rng.integers(0, 50))
        caller = rng.integers(1, 4, n).astype(np.uint64)
        start = rng.integers(0, 20, n)
        stop = start + rng.integers(0, 20, n)
        index = CallIndex(np.arange(n), caller, start, stop)
        assert np.array_equal(index.prev_greater, _brute_prev_greater(index)), trial
        qc, qt = rng.integers(0, 5, 40).astype(np.uint64), rng.integers(-2, 42, 40)
        got = index.running(qc, qt)
        for a, (c, t) in enumerate(zip(qc.tolist(), qt.tolist())):
            began = [i for i in range(n) if index.caller[i] == c and index.start[i] <= t]
            inside = [i for i in began if index.stop[i] > t]
            want = index.items[max(inside)] if began and inside and max(inside) <= max(began) \
                else -1
            assert got[a] == want, (trial, a)


def test_call_index_of_a_million_calls_in_a_row_takes_log_passes():
    """The guide's example: a top-level task making a million runtime calls one after
    another (none nests in another).  Jumping back along "previous call that stops later"
    links took a round per call (189 s for ``stats``); the descent takes a pass per level,
    log2 of the longest entry's calls, whatever the shape — calls in a row, all sharing one
    interval, or each nested in the one before (a query deep inside asks the descent)."""
    from legate_prof.causality.call_index import CallIndex
    from legate_prof.model.range_queries import LastGreater
    n = 1 << 20
    shapes = {"in a row": (np.arange(n) * 10, np.arange(n) * 10 + 5),
              "one interval": (np.zeros(n, np.int64), np.full(n, 5)),
              "nested": (np.arange(n), 2 * n - np.arange(n))}
    for name, (start, stop) in shapes.items():
        index = CallIndex(np.arange(n), np.ones(n, np.uint64), start, stop)
        assert len(LastGreater(index.stop, n).levels) == 21, name
        if name == "nested":
            assert np.array_equal(index.prev_greater, np.arange(n) - 1)
            t = np.full(8, 2 * n - 3)  # (every call began; only the first three stop later)
            assert (index.running(np.ones(8, np.uint64), t) == 2).all()
        else:
            assert (index.prev_greater == -1).all(), name
