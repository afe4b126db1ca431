"""The array runtime on Legate: NumPy results, and the seed guide's programs under legate --profile."""

import json
import subprocess
import sys
from pathlib import Path

import pytest


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _stats(paths, *extra):
    p = subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--json", *extra,
                        *map(str, paths)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_results_equal_numpy(legate_run):
    run = legate_run("runtime_vs_numpy.py")
    assert run.returncode == 0, run.output[-3000:]
    failed = [k for k, ok in run.manifest["checks"].items() if not ok]
    assert failed == []
    assert len(run.manifest["checks"]) >= 25


@pytest.fixture(scope="module")
def small_examples(tmp_path_factory):
    """The seed's Example 1 programs with N shrunk so the suite stays fast (import unchanged)."""
    d = tmp_path_factory.mktemp("examples")
    out = {}
    for name in ("inefficient.py", "efficient.py"):
        src = (EXAMPLES / name).read_text()
        assert "from legate_prof.runtime import numpy as np" in src
        assert "N = 10_000_000" in src
        (d / name).write_text(src.replace("N = 10_000_000", "N = 400_000"))
        out[name] = d / name
    return out


def test_inefficient_launches_10x_the_tasks_of_efficient(legate_run, small_examples):
    counts = {}
    for name, path in small_examples.items():
        run = legate_run(str(path))
        assert run.returncode == 0, run.output[-3000:]
        s = _stats(run.profiles)
        mine = [t for t in s["tasks"] if t["name"] not in ("Toplevel Task", "External Thread")]
        counts[name] = sum(t["count"] for t in mine)
        # every task's provenance points into the example file
        for t in mine:
            assert t["provenances"], t["name"]
            assert all(p.startswith(str(path) + ":") for p in t["provenances"]), t
    assert counts["inefficient.py"] >= 10 * counts["efficient.py"], counts
    # the 4096-element loop is the barcode: hundreds of tasks at the loop's lines
    s = _stats(legate_run(str(small_examples["inefficient.py"])).profiles)
    loop_lines = {f"{small_examples['inefficient.py']}:{n}" for n in (21, 22, 23)}
    in_loop = sum(t["count"] for t in s["tasks"] if set(t["provenances"]) & loop_lines)
    assert in_loop >= 400_000 // 4096 * 3


def test_task_names_say_what_ran(legate_run, small_examples):
    run = legate_run(str(small_examples["inefficient.py"]))
    names = {t["name"] for t in _stats(run.profiles)["tasks"]}
    assert {"BinaryOp", "Compare", "Nonzero", "Gather", "Scatter", "Random", "Convert",
            "BoolMaskSelect", "BoolMaskAssign"} <= names
    run = legate_run(str(small_examples["efficient.py"]))
    names = {t["name"] for t in _stats(run.profiles)["tasks"]}
    assert "PutMask" in names and "Nonzero" not in names


def test_oom_example_fails_with_legates_report(legate_run):
    run = legate_run("oom.py", cpus=1, sysmem=40, env_extra_key="LEGATE_TEST")
    assert run.returncode != 0
    out = run.output
    assert "Failed to allocate" in out and "of kind SYSTEM_MEM" in out
    assert "BinaryOp[" in out and "oom.py:16]" in out
    for line in (4, 7, 13):
        assert f"LogicalStore allocated at {EXAMPLES / 'oom.py'}:{line}" in out


@pytest.mark.parametrize("fixed", ["oom_stencil_hint.py", "oom_prefetch.py", "oom_inplace.py"])
def test_fixed_oom_versions_succeed_with_the_same_pool(legate_run, fixed):
    run = legate_run(fixed, cpus=1, sysmem=40, env_extra_key="LEGATE_TEST")
    assert run.returncode == 0, run.output[-3000:]
    assert "Failed to allocate" not in run.output


# The ndarray methods people write first, each a Legate task, checked against NumPy.
FIRST_METHODS = 'import json, os, warnings\nimport numpy\nfrom legate_prof.runtime import numpy as np\nwarnings.simplefilter("error")  # a NumPy fallback would be a failure here\nrs = numpy.random.default_rng(3)\nma = rs.random((6, 4)); mb = rs.random((4, 5)); va = rs.random(4); ia = rs.integers(0, 9, (6, 4))\nm, mm, v, i = np.array(ma), np.array(mb), np.array(va), np.array(ia)\nchecks = {}\ndef check(name, got, want):\n    got, want = numpy.asarray(got), numpy.asarray(want)\n    checks[name] = bool(got.shape == want.shape and got.dtype == want.dtype\n                        and numpy.allclose(got, want))\ncheck("sum", m.sum(), ma.sum())\ncheck("sum_axis0", m.sum(axis=0), ma.sum(axis=0))\ncheck("sum_axis1", m.sum(axis=1), ma.sum(axis=1))\ncheck("sum_int", i.sum(axis=0), ia.sum(axis=0))\ncheck("mean", m.mean(), ma.mean())\ncheck("mean_axis_neg1", m.mean(axis=-1), ma.mean(axis=-1))\ncheck("max", m.max(), ma.max())\ncheck("max_axis0", m.max(axis=0), ma.max(axis=0))\ncheck("min_axis1", m.min(axis=1), ma.min(axis=1))\ncheck("prod_axis0", m.prod(axis=0), ma.prod(axis=0))\ncheck("np_mean_axis", np.mean(m, axis=0), numpy.mean(ma, axis=0))\ncheck("reshape", m.reshape(4, 6), ma.reshape(4, 6))\ncheck("reshape_tuple_neg", m.reshape((-1,)), ma.reshape((-1,)))\ncheck("T", m.T, ma.T)\ncheck("transpose", m.transpose(), ma.transpose())\ncheck("matmul_op", m @ mm, ma @ mb)\ncheck("matmul_vec", m @ v, ma @ va)\ncheck("np_matmul", np.matmul(m, mm), numpy.matmul(ma, mb))\ncheck("astype", m.astype(np.float32), ma.astype(numpy.float32))\nc = m.copy(); c += 1.0\ncheck("copy_is_independent", m, ma)\ncheck("iadd", c, ma + 1.0)\nc *= 2.0; check("imul", c, (ma + 1.0) * 2.0)\nc -= 1.0; check("isub", c, (ma + 1.0) * 2.0 - 1.0)\nc /= 4.0; check("idiv", c, ((ma + 1.0) * 2.0 - 1.0) / 4.0)\nf = np.zeros((5,)); f.fill(3.5); check("fill", f, numpy.full(5, 3.5))\nxa = rs.random(20); x = np.array(xa)\ncheck("step_slice", x[1:17:3], xa[1:17:3])\ncheck("neg_step_slice", x[::-2], xa[::-2])\nxb = xa.copy(); xb[::4] = 7.0; x[::4] = 7.0\ncheck("step_assign_scalar", x, xb)\nxb[2:12:5] = numpy.array([1.0, 2.0]); x[2:12:5] = np.array([1.0, 2.0])\ncheck("step_assign_array", x, xb)\nwith open(os.environ["FIXTURE_MANIFEST"], "w") as fh:\n    json.dump({"checks": checks, "tasks": {}, "provenances": {}}, fh)\n'


def test_first_ndarray_methods_equal_numpy_and_are_legate_tasks(legate_run, tmp_path_factory):
    from legate_prof.model.kinds import ItemKind
    from legate_prof.load.loader import load_profile
    prog = tmp_path_factory.mktemp("first_methods") / "first_methods.py"
    prog.write_text(FIRST_METHODS)
    run = legate_run(str(prog))
    assert run.returncode == 0, run.output[-3000:]
    failed = [k for k, ok in run.manifest["checks"].items() if not ok]
    assert failed == [] and len(run.manifest["checks"]) >= 29
    model = load_profile(run.profiles)
    tasks = model.items["kind"] == ItemKind.TASK
    prov = model.op_provenance(model.items["op_id"])
    lines = FIRST_METHODS.splitlines()
    for name, text in (("Reduce", "m.sum(axis=0)"), ("Reshape", "m.reshape(4, 6)"),
                       ("Transpose", "m.T,"), ("MatMul", "m @ mm"),
                       ("StridedSlice", "x[1:17:3]"), ("StridedAssign", "x[::4] = 7.0"),
                       ("Fill", "f.fill(3.5)")):
        line = next(k for k, l in enumerate(lines, 1) if text in l)
        sel = tasks & (model.items["name"] == model.names.index(name))
        sites = {model.provenances[p].rsplit("/", 1)[-1] for p in prov[sel]}
        assert f"first_methods.py:{line}" in sites, (name, sites)


def test_operations_are_drawn_running_only_while_their_tasks_run(guide_examples):
    """An operation's box runs from its submission to its last task's stop: waiting until its
    first task is ready, ready until it starts, running only while one of its tasks runs (the
    ops lane once showed `Reduce` filling the run before the task it waited on even ran); the
    statistics count an operation's running time as that time, its waiting apart."""
    import numpy as np

    from legate_prof.analyze.stats import compute_stats
    from legate_prof.load.loader import load_profile
    from legate_prof.model.kinds import ItemKind
    _, profiles = guide_examples["efficient.py"]
    m = load_profile(profiles)
    it = m.items
    prov = m.op_provenance(it["op_id"])
    key = it["name"].astype(np.int64) * (len(m.provenances) + 1) + prov
    tasks = it["kind"] == ItemKind.TASK
    ops = np.flatnonzero(it["kind"] == ItemKind.RUNTIME_OP)
    assert len(ops) >= 10
    for i in ops.tolist():
        mine = tasks & (key == key[i])
        assert mine.any(), m.names[it["name"][i]]
        assert it["stop"][i] in set(it["stop"][mine].tolist())  # its last task's stop
        waits = m.waits_of(i)
        running, t = [], int(it["start"][i])
        for a, _, c in waits:
            running.append((t, a))
            t = c
        running.append((t, int(it["stop"][i])))
        assert waits and waits[0][0] == it["start"][i]  # waits from its submission
        for a, b in running:
            if b > a:  # while running, one of its tasks runs
                assert ((it["start"][mine] <= a) & (it["stop"][mine] >= a)).any()
    stats = compute_stats(m)
    task_time = {r["name"]: r["total_ns"] for r in stats["tasks"]}
    for row in stats["operations"]:
        # (running: while any of its tasks ran, its waiting apart; its tasks' time summed can
        # pass its total where two ran at once, as on a loaded machine: 1,138,769 ns of tasks
        # in an operation of 1,127,798, a fresh clone's suite)
        assert row["running_ns"] <= task_time[row["name"]]
        assert row["running_ns"] < row["total_ns"]


def test_a_stream_names_the_program_it_profiled(guide_examples):
    """The stream's header named the folder the program was run from (an environment
    variable nothing set): it names the script."""
    import io
    import msgpack
    for prog, profiles in guide_examples.values():
        [stream] = [p for p in profiles if str(p).endswith(".runtime.prof")]
        data = Path(stream).read_bytes()
        header = next(iter(msgpack.Unpacker(io.BytesIO(data[8:]), raw=False)))
        assert header["program"] == str(prog), header
        # (and that it records the program's waits: none recorded then means none happened)
        assert header["records_waits"] is True, header


def _rewritten_stream(src, dst, later_ns):
    """A copy of a runtime stream with every event stamped ``later_ns`` later."""
    import msgpack
    data = Path(src).read_bytes()
    assert data[:8] == b"LPRTSTR1"
    events = msgpack.Unpacker(raw=False, strict_map_key=False)
    events.feed(data[8:])
    header, *rest = list(events)
    pack = msgpack.Packer(use_bin_type=True).pack
    Path(dst).write_bytes(b"LPRTSTR1" + pack(header)
                          + b"".join(pack([e[0], e[1] + later_ns, *e[2:]]) for e in rest))


def test_a_stream_whose_clock_reads_ahead_of_its_log_is_moved_back_and_said(tmp_path):
    """A runtime stream stamps an operation when the program submits it, before Legion
    creates its tasks; the guide's 4-rank run had rank 0's stream 9.2 ms ahead of its log (99
    operations submitted after their tasks were created, 53 drawn 1 ns long).  A rank's
    stream that reads ahead is moved back by the least shift that puts every submission
    before its tasks, its operations and arrays alike, and a warning says so; the other
    ranks stay where they were."""
    import shutil

    import numpy as np

    from legate_prof.load.loader import load_profile
    from legate_prof.model.kinds import ItemKind
    real = EXAMPLES.parent / "fixtures" / "real" / "mpi2"
    run = tmp_path / "mpi2"
    shutil.copytree(real, run)
    ahead = 10_000_000  # (rank 0's submissions were 5.0 ms or more before their tasks)
    _rewritten_stream(real / "legate_0.runtime.prof", run / "legate_0.runtime.prof", ahead)
    before, after = load_profile([str(real)]), load_profile([str(run)])

    def times(m, rank, kind):
        it = m.items
        sel = (it["kind"] == kind) & (m.lanes["rank"][it["lane"]] == rank)
        if kind == ItemKind.INSTANCE:  # (the stream's arrays, not Legion's instances)
            sel &= it["op_id"] >= np.uint64(1 << 62)
        return np.sort(it["start"][sel].astype(np.int64))
    moved = times(after, 0, ItemKind.RUNTIME_OP) - times(before, 0, ItemKind.RUNTIME_OP)
    assert len(moved) and np.all(moved == moved[0]) and 0 < moved[0] < ahead
    lead = ahead - int(moved[0])
    arrays = times(after, 0, ItemKind.INSTANCE) - times(before, 0, ItemKind.INSTANCE)
    assert len(arrays) and np.all(arrays == moved[0])
    for kind in (ItemKind.RUNTIME_OP, ItemKind.INSTANCE):
        assert np.array_equal(times(after, 1, kind), times(before, 1, kind))
    # the least shift: the operation that was latest now starts as its first task is created
    it = after.items
    tasks = (it["kind"] == ItemKind.TASK) & (after.lanes["rank"][it["lane"]] == 0)
    assert np.isin(times(after, 0, ItemKind.RUNTIME_OP), it["create"][tasks]).any()
    said = [w for w in after.warnings if "runtime stream reads" in str(w)]
    assert len(said) == 1 and "rank 0's" in said[0] and f"{lead / 1e6:.3f} ms" in said[0]
    assert not any("runtime stream reads" in str(w) for w in before.warnings)


# Indexing and operators checked against NumPy in one run: each check's outcome (its values,
# shape and dtype, or the exception's type and words) is NumPy's for the same code, so the
# tests below fail on a check by name ("group:what") rather than the run on its first error.
AS_NUMPY = r'''import json, os, warnings
import numpy
from legate_prof.runtime import numpy as np
warnings.simplefilter("error")  # a NumPy fallback would be a failure here
checks = {}

def outcome(fn):
    try:
        got = fn()
    except Exception as e:
        return ("raised", type(e).__name__, str(e)[:300])
    if isinstance(got, list):
        got = [numpy.asarray(g) for g in got]
        return ("list", [(g.shape, str(g.dtype), g.tolist()) for g in got])
    got = numpy.asarray(got)
    return ("value", got.shape, str(got.dtype), got.tolist())

def check(name, ours, theirs):
    """ours() and theirs() (the same code on NumPy) come out the same."""
    got, want = outcome(ours), outcome(theirs)
    checks[name] = True if got == want else f"{got!r} != {want!r}"

xa, xm = numpy.arange(12.0), numpy.arange(12.0).reshape(3, 4)
x3 = numpy.arange(24.0).reshape(2, 3, 4)
a, m, m3 = np.array(xa), np.array(xm), np.array(x3)

def assign(arr, key, value):
    arr[key] = value
    return arr

check("view:slice_of_slice", lambda: a[2:10][1:3], lambda: xa[2:10][1:3])
check("view:row_then_element", lambda: m[1][2], lambda: xm[1][2])
check("view:rows_then_row", lambda: m[1:3][0], lambda: xm[1:3][0])
check("view:row_then_slice", lambda: m[2][1:3], lambda: xm[2][1:3])
def through_views(arr):
    arr[2:10][1:3] = 9.0
    arr[...][1:2][0] = -9.0
    return arr

check("view:assign_through", lambda: through_views(np.array(xa)), lambda: through_views(xa.copy()))

check("ellipsis:last_axis", lambda: m[..., 1], lambda: xm[..., 1])
check("ellipsis:first_axis", lambda: m[1, ...], lambda: xm[1, ...])
check("ellipsis:all", lambda: m[...], lambda: xm[...])
check("ellipsis:3d_last", lambda: m3[..., 2], lambda: x3[..., 2])
check("ellipsis:3d_middle", lambda: m3[1, ..., 2], lambda: x3[1, ..., 2])
check("ellipsis:3d_slice", lambda: m3[..., 1:3], lambda: x3[..., 1:3])
check("ellipsis:element", lambda: m[..., 2, 3], lambda: xm[..., 2, 3])
check("ellipsis:assign", lambda: assign(np.array(xm), (Ellipsis, 1), -1.0),
      lambda: assign(xm.copy(), (Ellipsis, 1), -1.0))
check("ellipsis:two", lambda: m[..., ...], lambda: xm[..., ...])

i4, xi4 = np.arange(4), numpy.arange(4)
check("bounds:past_end", lambda: i4[10], lambda: xi4[10])
check("bounds:before_start", lambda: i4[-7], lambda: xi4[-7])
check("bounds:last", lambda: i4[3], lambda: xi4[3])
check("bounds:first_from_end", lambda: i4[-4], lambda: xi4[-4])
check("bounds:second_axis", lambda: m[1, 10], lambda: xm[1, 10])
check("bounds:assign", lambda: assign(np.arange(4), 4, 1), lambda: assign(numpy.arange(4), 4, 1))
check("bounds:too_many", lambda: i4[1, 2], lambda: xi4[1, 2])
check("bounds:list", lambda: list(np.arange(4)), lambda: list(numpy.arange(4)))
check("bounds:for_rows", lambda: [row for row in m], lambda: [row for row in xm])
check("bounds:in", lambda: (3 in i4, 7 in i4), lambda: (3 in xi4, 7 in xi4))

def iadd(arr, value):
    arr += value
    return arr

def idiv(arr, value):
    arr /= value
    return arr

def tried(fn, arr):
    """What is left of ``arr`` after ``fn(arr)``, raising or not."""
    try:
        fn(arr)
    except Exception:
        pass
    return arr

xb = numpy.array([0.0, 5.0, 2.0, 7.0])
check("ufunc:less_scalar_first", lambda: np.less(1, i4), lambda: numpy.less(1, xi4))
check("ufunc:greater_equal_scalar_first", lambda: np.greater_equal(2, i4),
      lambda: numpy.greater_equal(2, xi4))
check("ufunc:equal_scalar_first", lambda: np.equal(2, i4), lambda: numpy.equal(2, xi4))
check("ufunc:less_scalars", lambda: np.less(1, 2), lambda: numpy.less(1, 2))
check("ufunc:eq_numpy_array", lambda: np.array(xa[:4]) == xb, lambda: xa[:4] == xb)
check("ufunc:ne_numpy_array", lambda: np.array(xa[:4]) != xb, lambda: xa[:4] != xb)
check("ufunc:less_numpy_first", lambda: np.less(xb, np.array(xa[:4])),
      lambda: numpy.less(xb, xa[:4]))
check("ufunc:eq_list", lambda: i4 == [0, 5, 2, 7], lambda: xi4 == [0, 5, 2, 7])
check("ufunc:iadd_float_into_int", lambda: iadd(np.arange(4), 1.5),
      lambda: iadd(numpy.arange(4), 1.5))
check("ufunc:int_left_as_it_was", lambda: tried(lambda x: iadd(x, 1.5), np.arange(4)),
      lambda: tried(lambda x: iadd(x, 1.5), numpy.arange(4)))
check("ufunc:idiv_int", lambda: idiv(np.arange(4), 2), lambda: idiv(numpy.arange(4), 2))
check("ufunc:iadd_float_array_into_int", lambda: iadd(np.arange(4), np.arange(4) / 2),
      lambda: iadd(numpy.arange(4), numpy.arange(4) / 2))
check("ufunc:add_out_int", lambda: np.add(i4, 1.5, out=np.arange(4)),
      lambda: numpy.add(xi4, 1.5, out=numpy.arange(4)))
check("ufunc:sqrt_out_int", lambda: np.sqrt(i4, out=np.arange(4)),
      lambda: numpy.sqrt(xi4, out=numpy.arange(4)))
check("ufunc:iadd_int_into_float32", lambda: iadd(np.zeros(4, np.float32), i4),
      lambda: iadd(numpy.zeros(4, numpy.float32), xi4))
check("ufunc:iadd_int_scalar", lambda: iadd(np.arange(4), 2), lambda: iadd(numpy.arange(4), 2))
xt = numpy.array([0.0, 0.0, 3.0, 0.0])
check("truth:any_method", lambda: (a > 5).any(), lambda: (xa > 5).any())
check("truth:any_none", lambda: (a > 50).any(), lambda: (xa > 50).any())
check("truth:all_method", lambda: (a >= 0).all(), lambda: (xa >= 0).all())
check("truth:all_not", lambda: (a > 0).all(), lambda: (xa > 0).all())
check("truth:any_floats", lambda: np.array(xt).any(), lambda: xt.any())
check("truth:all_floats", lambda: np.array(xt).all(), lambda: xt.all())
check("truth:np_any", lambda: np.any(a > 10), lambda: numpy.any(xa > 10))
check("truth:np_all_list", lambda: np.all([1, 2, 0]), lambda: numpy.all([1, 2, 0]))
check("truth:any_axis", lambda: (m > 5).any(axis=0), lambda: (xm > 5).any(axis=0))
check("truth:all_axis", lambda: (m > 2).all(axis=1), lambda: (xm > 2).all(axis=1))
check("truth:if_any", lambda: "yes" if (a > 5).any() else "no",
      lambda: "yes" if (xa > 5).any() else "no")
with open(os.environ["FIXTURE_MANIFEST"], "w") as fh:
    json.dump({"checks": checks, "tasks": {}, "provenances": {}}, fh)
'''


@pytest.fixture(scope="module")
def as_numpy_checks(legate_run, tmp_path_factory):
    """The checks of one run of AS_NUMPY: name -> True, or what differed from NumPy."""
    prog = tmp_path_factory.mktemp("as_numpy") / "as_numpy.py"
    prog.write_text(AS_NUMPY)
    run = legate_run(str(prog))
    assert run.returncode == 0, run.output[-3000:]
    return run.manifest["checks"]


def _failed(checks, group):
    mine = {k: v for k, v in checks.items() if k.startswith(group + ":")}
    assert mine, group
    return {k: v for k, v in mine.items() if v is not True}


def test_indexing_a_view_indexes_it_as_numpy(as_numpy_checks):
    """A view of a view (``a[2:10][1:3]``, ``m[1][2]``) once raised asking the base's truth."""
    assert _failed(as_numpy_checks, "view") == {}


def test_an_ellipsis_stands_for_the_axes_it_skips(as_numpy_checks):
    """``m[..., 1]`` once ignored the ``...`` and gave row 1, not column 1."""
    assert _failed(as_numpy_checks, "ellipsis") == {}


def test_an_index_out_of_range_raises_index_error_and_arrays_iterate(as_numpy_checks):
    """``a[10]`` once gave Legate's ValueError and a page of text, so ``list(a)`` crashed."""
    assert _failed(as_numpy_checks, "bounds") == {}


def test_any_and_all_answer_as_numpys(as_numpy_checks):
    """``if (x > 0.5).any():`` once raised AttributeError; ``np.any`` fell back to NumPy."""
    assert _failed(as_numpy_checks, "truth") == {}


def test_comparisons_and_outputs_follow_numpys_operands_and_casting(as_numpy_checks):
    """``np.less(1, a)``, ``a == numpy_array`` once raised; ``int_array += 1.5`` truncated."""
    assert _failed(as_numpy_checks, "ufunc") == {}
