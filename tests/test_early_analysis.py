"""An analysis begun in a forked copy while the model is built (``load.early_analysis``):
what the copy works out is what this process would have, the copy sees no waits,
utilization or warnings, and where it fails, or is no longer wanted, nothing is left of it."""

from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path

import pytest

from legate_prof import output_file
from legate_prof.analyze.idle_gaps import idle_gaps
from legate_prof.analyze.idle_ranks import EARLY
from legate_prof.load import early_analysis
from legate_prof.load.early_analysis import EarlyAnalysis, early_answer
from legate_prof.load.loader import load_profile
from legate_prof.query import as_source

ROOT = Path(__file__).resolve().parents[1]
MPI4 = ROOT / "fixtures" / "real" / "mpi4"
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this system")


@pytest.fixture(autouse=True)
def fork_allowed(monkeypatch):
    """No cache; a Qt application other tests made is not this process's."""
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", "")
    monkeypatch.setattr(output_file, "_qt_imported", lambda: False)


def what_it_saw(model):
    """An early analysis: the process it ran in and what its model held."""
    return {"pid": os.getpid(), "items": len(model.items["start"]),
            "lanes": len(model.lanes["rank"]),
            "events": sum(len(next(iter(t.values()))) for t in model.events.values()),
            "unknown": [f for f in ("waits", "warnings", "utilization_steps", "busy_ns")
                        if getattr(model, f) is None]}


def fails(model):
    raise RuntimeError("an analysis that fails in the copy")


def sleeps(model):
    time.sleep(120)
    return {}


def test_the_idle_time_a_copy_explains_during_the_build_is_the_idle_time_explained_after():
    model = load_profile([str(MPI4)], stack=False, ranked=True, early=EARLY)
    early = early_answer(model, EARLY)
    assert early is not None and any(g["idle_ns"] for g in early["groups"])
    assert early == idle_gaps(as_source(model))
    assert early_answer(model.evolve(sources=["x"]), EARLY) == early  # (a copy sharing items)


def test_the_copy_sees_the_items_lanes_and_events_but_no_waits_utilization_or_warnings():
    probe = f"{__name__}:what_it_saw"
    model = load_profile([str(MPI4)], stack=False, ranked=True, early=probe)
    saw = early_answer(model, probe)
    assert saw["pid"] != os.getpid()
    assert saw["items"] == model.n_items and saw["lanes"] == model.n_lanes
    assert saw["events"] == sum(len(next(iter(t.values()))) for t in model.events.values()) > 0
    assert saw["unknown"] == ["waits", "warnings", "utilization_steps", "busy_ns"]
    assert len(model.waits["item"]) and model.busy_ns  # (the model returned has them all)


def test_an_analysis_that_fails_in_the_copy_has_no_answer_and_leaves_no_process(monkeypatch):
    copies = []
    begin = EarlyAnalysis.begin
    monkeypatch.setattr(EarlyAnalysis, "begin",
                        lambda self, model: (begin(self, model), copies.append(self.pid)))
    model = load_profile([str(MPI4)], stack=False, ranked=True, early=f"{__name__}:fails")
    assert len(copies) == 1 and copies[0]
    assert early_answer(model, f"{__name__}:fails") is None
    with pytest.raises(ChildProcessError):
        os.waitpid(copies[0], os.WNOHANG)  # (the copy was waited for)


def test_no_copy_outside_the_main_thread():
    got = []
    t = threading.Thread(target=lambda: got.append(
        load_profile([str(MPI4)], stack=False, ranked=True, early=EARLY)))
    t.start()
    t.join()
    assert early_answer(got[0], EARLY) is None


def test_a_copy_whose_model_is_gone_is_stopped():
    model = load_profile([str(MPI4)], stack=False, ranked=True)
    analysis = EarlyAnalysis(f"{__name__}:sleeps")
    analysis.begin(model)
    pid = analysis.pid
    assert pid and os.waitpid(pid, os.WNOHANG) == (0, 0)  # (still working)
    early_analysis.keep(model, analysis)
    del model, analysis
    gc.collect()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # (stopped and waited for)


def test_stats_explains_the_same_idle_time_with_or_without_the_copy(monkeypatch, capsys):
    """With the copy, this process links no item for the idle time: the copy did."""
    from legate_prof.analyze import idle_gaps as module
    from legate_prof.cli import main
    linked = []
    real = module.link_for_classes
    monkeypatch.setattr(module, "link_for_classes", lambda *a: linked.append(1) or real(*a))
    assert main(["stats", "--json", "--no-cache", str(MPI4)]) == 0
    with_copy = capsys.readouterr().out
    assert linked == []
    monkeypatch.setattr(output_file, "_qt_imported", lambda: True)  # (no fork: no copy)
    assert main(["stats", "--json", "--no-cache", str(MPI4)]) == 0
    assert capsys.readouterr().out == with_copy
    assert linked == [1]


def test_no_copy_where_the_machine_lacks_the_memory_it_would_take(monkeypatch):
    monkeypatch.setattr(early_analysis, "available_memory", lambda: 1 << 20)
    model = load_profile([str(MPI4)], stack=False, ranked=True, early=EARLY)
    assert early_answer(model, EARLY) is None
    monkeypatch.setattr(early_analysis, "available_memory", lambda: None)  # (not told: try)
    model = load_profile([str(MPI4)], stack=False, ranked=True, early=EARLY)
    assert early_answer(model, EARLY) is not None


@pytest.mark.parametrize("command", ["critical", "insights"])
def test_critical_and_insights_take_the_messages_latency_a_copy_worked_out(monkeypatch, capsys,
                                                                             command):
    """``critical`` and ``insights`` ask for the messages' latency after the links; a copy
    begun during the build works it out beside them (``LATENCY_EARLY``): this process
    computes none, and says what it says without the copy, where it computes it."""
    from legate_prof.cli import main
    from legate_prof.query import source as module
    from legate_prof.query.source import LATENCY_EARLY
    model = load_profile([str(MPI4)], stack=False, ranked=True, early=LATENCY_EARLY)
    early = early_answer(model, LATENCY_EARLY)
    assert early is not None and early.messages > 0
    assert early == module.message_latency(model.item_parts())
    here = []
    real = module.message_latency
    monkeypatch.setattr(module, "message_latency", lambda *a: here.append(1) or real(*a))
    assert main([command, "--no-cache", str(MPI4)]) == 0
    with_copy = capsys.readouterr().out
    assert here == [] and with_copy.strip()
    monkeypatch.setattr(output_file, "_qt_imported", lambda: True)  # (no fork: no copy)
    assert main([command, "--no-cache", str(MPI4)]) == 0
    assert capsys.readouterr().out == with_copy
    assert here == [1]
