"""``model.sort_order``: exactly numpy's stable orders, whatever the keys."""

import numpy as np
import pytest

from legate_prof.model.sort_order import (NEARLY_SORTED, SMALL, lex_order, sorting_order,
                                          stable_order, unique_values, unique_with)

N = 3 * SMALL


def _columns(rng):
    """Key columns of every shape the fast paths tell apart."""
    yield "ids in no order", rng.integers(0, 1 << 62, N).astype(np.uint64)
    yield "ids past 2**63", (rng.integers(0, 1 << 62, N).astype(np.uint64) | np.uint64(1 << 63))
    yield "full uint64 range", np.concatenate([rng.integers(0, 1 << 62, N - 2).astype(
        np.uint64), np.array([0, (1 << 64) - 1], np.uint64)])
    yield "times with ties", rng.integers(0, N // 4, N).astype(np.int64) * 1000
    yield "negative", -rng.integers(0, 1 << 40, N)
    yield "int64 extremes", np.concatenate([rng.integers(-5, 5, N - 2),
                                            np.array([-(1 << 63), (1 << 63) - 1])])
    yield "few values", rng.integers(0, 7, N)
    yield "few values, far from zero", rng.integers(0, 3, N) + (1 << 50)
    yield "one value", np.full(N, 12345, np.int64)
    yield "int32", rng.integers(-(1 << 31), 1 << 31, N).astype(np.int32)
    nearly = np.sort(rng.integers(0, 1 << 40, N))
    nearly[:: NEARLY_SORTED * 4] = rng.integers(0, 1 << 40, len(nearly[:: NEARLY_SORTED * 4]))
    yield "nearly sorted", nearly
    yield "runs of equal ids, wide", np.repeat(rng.integers(0, 1 << 62, N // 16).astype(
        np.uint64), 16)[rng.permutation(N)]
    yield "descending", np.arange(N, 0, -1) * (1 << 30)
    yield "small", rng.integers(0, 1 << 62, SMALL - 1)
    yield "a few", rng.integers(0, 5, 9).astype(np.int16)
    yield "one", np.array([7], np.uint8)
    yield "none", np.zeros(0, np.int64)
    yield "floats", rng.normal(size=N)
    yield "bools", rng.integers(0, 2, N).astype(bool)


@pytest.mark.parametrize("seed", range(3))
def test_stable_order_is_numpys_stable_argsort(seed):
    rng = np.random.default_rng(seed)
    for name, key in _columns(rng):
        want = np.argsort(key, kind="stable")
        got = stable_order(key)
        assert np.array_equal(got, want), name
        assert got.dtype.kind == "i", name  # (an index array, as numpy's)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sorting_order_sorts_every_key_with_every_position_once(seed):
    """Ties in any order, but the keys sorted and no position lost or repeated."""
    rng = np.random.default_rng(seed)
    for what, key in _columns(rng):
        order = sorting_order(key)
        assert np.array_equal(np.sort(order), np.arange(len(key))), what
        assert np.array_equal(key[order], np.sort(key, kind="stable")), what


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lex_order_is_numpys_lexsort(seed):
    rng = np.random.default_rng(seed)
    cols = dict(_columns(rng))
    node = rng.integers(0, 4, N)
    cases = [
        (cols["times with ties"], node),  # folded: fits in one number
        (np.arange(N), cols["negative"], node),  # folded, then ties put back
        (cols["ids in no order"], cols["times with ties"]),  # too wide: numpy's lexsort
        (-cols["times with ties"], cols["few values"], node),
        (cols["bools"], cols["int32"]),
        (cols["floats"], node),
        (cols["ids past 2**63"], cols["one value"]),
    ]
    for k, keys in enumerate(cases):
        assert np.array_equal(lex_order(keys), np.lexsort(keys)), k
    small = (node[:100], cols["negative"][:100])
    assert np.array_equal(lex_order(small), np.lexsort(small))


def test_two_dimensional_and_empty_keys_as_numpy():
    key = np.arange(2 * N).reshape(2, N)[:, ::-1]
    assert np.array_equal(stable_order(key), np.argsort(key, kind="stable"))
    assert np.array_equal(unique_values(key % 1000), np.unique(key % 1000))
    assert np.array_equal(stable_order(np.zeros(0, np.int64)), np.zeros(0, np.int64))


def test_unique_values_is_numpys_unique():
    rng = np.random.default_rng(5)
    for name, values in [*_columns(rng), ("a table", rng.integers(0, 4, (3, 5)))]:
        want = np.unique(values)
        got = unique_values(values)
        assert got.dtype == want.dtype and np.array_equal(got, want), name


def test_unique_values_of_ints_never_imports_numpy_ma():
    """numpy's ``unique`` imports ``numpy.ma`` on its first call (14-28 ms of a command)."""
    import subprocess
    import sys
    code = ("import sys, numpy as np\n"
            "from legate_prof.model.sort_order import unique_values\n"
            "for v in (np.array([3, 1, 3]), np.zeros(0, np.int64), np.array([True, False]),\n"
            "          np.arange(10000) % 7):\n"
            "    unique_values(v)\n"
            "print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("asked", [(True, False, False), (False, True, False), (False, False, True),
                                   (True, True, True), (True, True, False),
                                   (False, False, False)])
def test_unique_with_is_numpys_unique(asked):
    index, inverse, counts = asked
    rng = np.random.default_rng(7)
    for name, values in _columns(rng):
        want = np.unique(values, return_index=index, return_inverse=inverse,
                         return_counts=counts)
        got = unique_with(values, index=index, inverse=inverse, counts=counts)
        if not (index or inverse or counts):  # (numpy gives the values alone)
            want, got = (want,), (got,)
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w), name


def test_a_search_of_many_queries_sorts_them_first_with_numpys_answer():
    """``search_sorted`` sorts its queries first above ``SORTED_SEARCH_ABOVE`` among more
    than ``SORTED_SEARCH_KEYS`` keys (numpy's search is 3-5x faster on queries in order):
    ``np.searchsorted``'s answer, either side, few keys or many, queries in order or not,
    with repeats, absent and past either end; and ``equal_runs`` numbers the runs of equal
    values a search makes once."""
    from legate_prof.model.sort_order import SORTED_SEARCH_KEYS
    rng = np.random.default_rng(11)
    for keys in (np.unique(rng.integers(10, 1 << 40, 20_000)),
                 np.unique(rng.integers(10, 1 << 40, SORTED_SEARCH_KEYS + 5_000))):
        _searched_as_numpy_searches(rng, keys)


def _searched_as_numpy_searches(rng, keys):
    from legate_prof.model.sort_order import SORTED_SEARCH_ABOVE, equal_runs, search_sorted
    for n in (0, 5, SORTED_SEARCH_ABOVE + 1, 50_000):
        for query in (rng.integers(0, 1 << 41, n), np.sort(rng.integers(0, 1 << 41, n)),
                      np.repeat(rng.choice(keys, max(n // 3, 1)), 3)[:n]):
            for side in ("left", "right"):
                assert np.array_equal(search_sorted(keys, query, side),
                                      np.searchsorted(keys, query, side=side))
            head, runs = equal_runs(query)
            assert np.array_equal(np.repeat(query[head], runs), query)
            assert len(head) == 0 or np.all(query[head][1:] != query[head][:-1])
