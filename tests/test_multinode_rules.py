"""The reference's rules that only multi-rank profiles exercise, on small hand-written logs.

* a MetaWaitInfo belongs to the MetaInfo / MessageInfo of its (op, lg_id) read just before it
  (``State::find_last_meta_mut``), not to the last one that started before the wait;
* a wait that begins before its task is subtracted whole, and stops the processor's count;
* a copy between two nodes counts in both nodes' channel utilization lines.
"""

import numpy as np

from legate_prof.model.kinds import ItemKind
from legate_prof.read.legion_writer import LegionProfWriter
from legate_prof.load.loader import load_profile
from legate_prof.analyze.stats import compute_stats

UTIL = 0x1D00000000000000  # processor ids of node 0: tag 0x1d, node in bits 40..55
CPU = 3
SCHED, MSG = 7, 9  # meta-task kinds (lg_id)


def _proc(node, i):
    return UTIL | (node << 40) | i


def _mem(node, i):
    return 0x1E00000000000000 | (node << 40) | i


def _head(w, node, nodes=2):
    w.write("MachineDesc", node_id=node, num_nodes=nodes, hostname="h", host_id=1,
            process_id=node)
    w.write("ZeroTime", zero_time=0)
    w.write("MetaDesc", kind=SCHED, message=False, ordered_vc=False, name="Scheduler")
    w.write("MetaDesc", kind=MSG, message=True, ordered_vc=False, name="Some Message")
    w.write("TaskKind", task_id=1, name="Top", overwrite=False)
    w.write("TaskVariant", task_id=1, variant_id=1, name="Top")
    for i in range(2):
        w.write("ProcDesc", proc_id=_proc(node, i), kind=3, uuid_size=16, cuda_device_uuid=b"")
    w.write("ProcDesc", proc_id=_proc(node, CPU), kind=2, uuid_size=16, cuda_device_uuid=b"")
    w.write("MemDesc", mem_id=_mem(node, 0), kind=2, capacity=1 << 30)


def _meta(w, node, proc, op, start, stop, fevent, lg=SCHED):
    w.write("MetaInfo", op_id=op, lg_id=lg, proc_id=_proc(node, proc), create=start,
            ready=start, start=start, stop=stop, fevent=fevent)


def _wait(w, op, start, end, lg=SCHED):
    w.write("MetaWaitInfo", op_id=op, lg_id=lg, wait_start=start, wait_ready=end,
            wait_end=end)


def _running(model, kind=ItemKind.META):
    """{(rank, start): running ns} of the items of ``kind``."""
    it, w = model.items, model.waits
    waited = np.bincount(w["item"], weights=(w["end"] - w["start"]).astype(float),
                         minlength=model.n_items)
    out = {}
    for i in np.flatnonzero(it["kind"] == int(kind)).tolist():
        rank = int(model.lanes["rank"][it["lane"][i]])
        out[(rank, int(it["start"][i]))] = int(it["stop"][i] - it["start"][i] - waited[i])
    return out


def test_meta_waits_go_to_the_record_before_them_across_processors_and_files(tmp_path):
    p0, p1 = tmp_path / "legate_0.prof", tmp_path / "legate_1.prof"
    with LegionProfWriter(p0) as w:
        _head(w, 0)
        # two scheduler meta-tasks of one (op, kind) overlap on two processors; the wait
        # written after the first started after the second
        _meta(w, 0, 0, 0, 100, 1000, 11)
        _wait(w, 0, 150, 200)
        _meta(w, 0, 1, 0, 120, 900, 12)
        _wait(w, 0, 130, 140)
        # a message has its waits too
        w.write("MessageInfo", op_id=5, lg_id=MSG, proc_id=_proc(0, 1), spawn=2000,
                create=2000, ready=2000, start=2000, stop=3000, fevent=13)
        _wait(w, 5, 2100, 2400, lg=MSG)
    with LegionProfWriter(p1) as w:
        _head(w, 1)
        # the same op id on the other rank, started earlier than rank 0's
        _meta(w, 1, 0, 0, 50, 5000, 21)
        _wait(w, 0, 60, 4000)
    run = _running(load_profile([p0, p1], stack=False, workers=1))
    assert run == {(0, 100): 850, (0, 120): 770, (1, 50): 1010}
    msg = _running(load_profile([p0, p1], stack=False, workers=1), ItemKind.MESSAGE)
    assert msg == {(0, 2000): 700}
    # per file alone, the same
    assert _running(load_profile([p1], stack=False, workers=1)) == {(1, 50): 1010}


def test_a_wait_that_begins_before_its_task_is_subtracted_whole(tmp_path):
    p = tmp_path / "legate_0.prof"
    with LegionProfWriter(p) as w:
        _head(w, 0, nodes=1)
        cpu = _proc(0, CPU)
        # the top-level task runs [1000, 5000]; the external thread's implicit task starts
        # at 1200 but its wait begins at 1000 (Legion writes that on multi-rank runs)
        w.write("ImplicitTaskInfo", op_id=1, task_id=1, variant_id=1, proc_id=cpu,
                create=1000, ready=1000, start=1000, stop=5000, fevent=31)
        w.write("ImplicitTaskInfo", op_id=2, task_id=1, variant_id=1, proc_id=cpu,
                create=1200, ready=1200, start=1200, stop=8000, fevent=32)
        w.write("TaskWaitInfo", op_id=2, task_id=1, variant_id=1, wait_start=1000,
                wait_ready=5000, wait_end=5000, wait_event=0)
    model = load_profile([p], stack=False, workers=1)
    stats = compute_stats(model)
    top = next(r for r in stats["tasks"] if r["name"] == "Top")
    assert top["running_ns"] == 4000 + (6800 - 4000)
    # the reference's processor count: +1 at starts and wait ends, -1 at stops and wait
    # starts: the wait at 1000 cancels the top-level task until the implicit one starts
    step = model.utilization_steps[(0, "cpu")]
    assert step.average(np.array([1000.0, 1200.0, 8000.0])).tolist() == [0.0, 1.0]


def test_a_copy_between_two_nodes_counts_in_both_nodes_channel_lines(tmp_path):
    p0, p1 = tmp_path / "legate_0.prof", tmp_path / "legate_1.prof"
    with LegionProfWriter(p0) as w:
        _head(w, 0)
        _meta(w, 0, 0, 0, 0, 10, 11)
        w.write("CopyInfo", op_id=3, size=64, create=100, ready=100, start=100, stop=300,
                fevent=41, collective=0)
        w.write("CopyInstInfo", src=_mem(0, 0), dst=_mem(1, 0), src_fid=1, dst_fid=1,
                src_inst=1, dst_inst=2, fevent=41, num_hops=1, indirect=False)
    with LegionProfWriter(p1) as w:
        _head(w, 1)
        _meta(w, 1, 0, 0, 0, 10, 21)
    for files in ([p0, p1], [p0]):
        model = load_profile(files, stack=False, workers=1)
        for rank in (0, 1):
            step = model.utilization_steps[(rank, "channel")]
            assert step.average(np.array([100.0, 300.0])).tolist() == [1.0], (files, rank)
        assert model.busy_ns[(0, "channel")] == 200  # the lane's own rank's busy time
        assert (1, "channel") not in model.busy_ns
