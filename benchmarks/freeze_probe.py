"""How long the viewer's window goes without answering (not a test): a frozen event loop,
measured from outside and from inside while profiles open.

    python benchmarks/freeze_probe.py --cold RUN [--open FILES_OR_FOLDER] [--cached]
        [--close-after S] [--repeat N] [--xvfb]

Outside: an X client (``x_ping_probe.c``, compiled here) sends ``_NET_WM_PING`` to the window
every 20 ms from the moment it is shown; Qt's GUI thread answers it, so a late answer is a
frozen event loop.  Inside: a 5 ms heartbeat ``QTimer`` in the viewer's process; a gap between
its ticks is the same freeze seen from within.  ``--xvfb`` starts an X server (Xvfb,
1920x1200) and a window manager (openbox) for the run; otherwise ``$DISPLAY`` is used.

Steps, each in a fresh ``legate_prof view`` process:

* ``cold``: ``view RUN`` with an empty cache, until its findings are shown;
* ``open`` (with ``--open``): then File → Open of FILES (the window's ``open_files``, what the
  dialog calls), until their findings are shown;
* ``cached`` (with ``--cached``): ``view RUN`` again, its cache entry written by ``cold``;
* ``close`` (with ``--close-after S``): ``view`` of the ``--open`` files (else RUN), closed as
  a window manager closes it (``WM_DELETE_WINDOW``) S seconds into the load: seconds until the
  process is gone, and whether the cache was left with anything half-written.

Per step it prints the longest stall and the count over 100 ms, by the probe and by the
heartbeat (stretches under 50 ms are not listed: "longest 0 ms" means none over 50 ms), and
the seconds from the window's appearance (or File → Open) to the timeline and to the
findings, and from the command's start to the first timeline.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEARTBEAT_MS = 5
STALL_MS = 50  # gaps over this are listed (over 100 ms is a freeze a user feels)
PING_MS = 20


# ---- the viewer's process ---------------------------------------------------------------

def child(spec):
    """Run ``legate_prof view`` in this process with a heartbeat and a driver: print events
    (``{"event": ..., "t": monotonic}``) and stalls as JSON lines."""
    sys.path.insert(0, str(ROOT))
    from PySide6 import QtCore, QtWidgets
    app = (_tracing_application() if spec.get("trace") else QtWidgets.QApplication)(
        ["legate_prof"])
    state = {"last": time.monotonic(), "phase": "start", "opened": False, "said": set()}

    def emit(**kw):
        print(json.dumps({**kw, "t": time.monotonic()}), flush=True)

    def beat():
        now = time.monotonic()
        gap = now - state["last"]
        state["last"] = now
        if gap * 1000 > STALL_MS:
            emit(event="beat_stall", ms=round(gap * 1000, 1), start=now - gap)

    heart = QtCore.QTimer()
    heart.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
    heart.timeout.connect(beat)
    heart.start(HEARTBEAT_MS)

    def window():
        from legate_prof.viewer.app import MainWindow
        return next((w for w in app.topLevelWidgets() if isinstance(w, MainWindow)), None)

    def once(name, **kw):
        if name not in state["said"]:
            state["said"].add(name)
            emit(event=name, **kw)

    def findings_shown(win):
        f = win.findings
        return f is not None and f.count() > 0 and win.loading is None and \
            not f.item(f.count() - 1).text().endswith("…")

    def watch():
        win = window()
        if win is None:
            return
        if win.isVisible():
            once("window", wid=int(win.winId()))
        step = "open" if state["opened"] else "first"
        if win.timeline is not None and win.loading is None:
            once(f"{step}_timeline")
            if findings_shown(win):
                once(f"{step}_findings")
                if spec.get("open") and "open_start" not in state["said"]:
                    state["said"].add("open_start")

                    def start_open():
                        emit(event="open_start")
                        state["opened"] = True
                        win.open_files(spec["open"])
                    QtCore.QTimer.singleShot(500, start_open)
                elif (state["opened"] or not spec.get("open")) and not spec.get("stay") \
                        and f"{step}_done" not in state["said"]:
                    once(f"{step}_done")
                    QtCore.QTimer.singleShot(1500, lambda: (emit(event="closing"),
                                                            win.close()))

    poll = QtCore.QTimer()
    poll.timeout.connect(watch)
    poll.start(20)
    from legate_prof.cli import main
    emit(event="start")
    rc = main(["view", *spec["files"]])
    emit(event="exit", rc=rc)
    return rc


def _tracing_application():
    """A QApplication that says which events took long on the window's thread, and where the
    other threads were when each ended (``--trace``: where a freeze comes from)."""
    import traceback
    from PySide6 import QtWidgets

    class Tracing(QtWidgets.QApplication):
        def notify(self, receiver, event):
            t0 = time.monotonic()
            try:
                return super().notify(receiver, event)
            finally:
                ms = (time.monotonic() - t0) * 1000
                if ms > float(os.environ.get("TRACE_MS", STALL_MS)):
                    main = threading.main_thread().ident
                    others = {t.ident: t.name for t in threading.enumerate()}
                    where = {others.get(k, str(k)): " <- ".join(
                        f"{os.path.basename(f.filename)}:{f.lineno} {f.name}"
                        for f in reversed(traceback.extract_stack(fr)[-4:]))
                        for k, fr in sys._current_frames().items() if k != main}
                    print(json.dumps({"event": "slow_event", "ms": round(ms, 1),
                                      "type": str(event.type()).split(".")[-1],
                                      "receiver": type(receiver).__name__, "others": where,
                                      "t": time.monotonic()}), flush=True)
    return Tracing


# ---- the measuring side ------------------------------------------------------------------

class Display:
    """An X server and a window manager for the run (``--xvfb``), or the one in $DISPLAY."""

    def __init__(self, xvfb):
        self.procs = []
        self.env = dict(os.environ)
        if xvfb:
            num = 90 + os.getpid() % 9
            self.procs.append(subprocess.Popen(
                ["Xvfb", f":{num}", "-screen", "0", "1920x1200x24", "-nolisten", "tcp"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            self.env["DISPLAY"] = f":{num}"
            time.sleep(1.0)
            if shutil.which("openbox"):
                self.procs.append(subprocess.Popen(["openbox"], env=self.env,
                                                   stdout=subprocess.DEVNULL,
                                                   stderr=subprocess.DEVNULL))
                time.sleep(0.5)
        self.env.pop("QT_QPA_PLATFORM", None)
        self.env.pop("LEGATE_PROF_HIDDEN_WINDOW", None)

    def close(self):
        for p in reversed(self.procs):
            p.terminate()
            p.wait(5)


def build_probe(folder):
    exe = Path(folder) / "x_ping_probe"
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(ROOT / "benchmarks" / "x_ping_probe.c"),
                    "-lX11"], check=True)
    return str(exe)


def run_step(name, spec, display, probe, cache_dir, close_after=None, limit_s=900):
    """One ``view`` process, pinged from outside; returns its events and stalls."""
    # this tree's legate_prof (a snapshot measured while the worktree changes: give it a
    # link legate_prof/viewer -> ../viewer), in this process and the rank workers
    env = dict(display.env, LEGATE_PROF_CACHE_DIR=str(cache_dir), PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tempfile.gettempdir())
    events, beats, pinger, closed_at = [], [], None, None
    t_start = time.monotonic()
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    while True:
        if close_after is not None and closed_at is None and pinger is not None and \
                time.monotonic() - t_window > close_after:
            out = subprocess.run([probe, "close", str(wid)], env=display.env,
                                 capture_output=True, text=True).stdout
            closed_at = float(out.split()[1])
        if not sel.select(timeout=0.05):
            if proc.poll() is not None:
                break
            if time.monotonic() - t_start > limit_s:
                proc.kill()
                break
            continue
        line = proc.stdout.readline()
        if not line:
            break
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev["event"] == "beat_stall":
            beats.append(ev)
            continue
        events.append(ev)
        if ev["event"] == "window" and pinger is None:
            wid, t_window = ev["wid"], ev["t"]
            pinger = subprocess.Popen([probe, "ping", str(wid), str(limit_s), str(PING_MS)],
                                      env=display.env, stdout=subprocess.PIPE, text=True)
    proc.wait()
    t_exit = time.monotonic()
    err = proc.stderr.read()
    pings, answered = [], 0
    if pinger is not None:
        try:
            out, _ = pinger.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pinger.kill()
            out, _ = pinger.communicate()
        for line in out.splitlines():
            f = line.split()
            if f and f[0] in ("stall", "pending"):
                pings.append({"start": float(f[1]), "ms": float(f[2])})
            elif f[:2] == ["summary", "pings"]:
                answered = int(f[2])
    return {"name": name, "events": events, "beats": beats, "pings": pings,
            "answered": answered,
            "closed_at": closed_at, "exit_at": t_exit, "stderr": err[-2000:]}


def window_of(result, first, last):
    """[t0, t1] of a phase: from event ``first`` to event ``last`` (or the process end)."""
    t = {e["event"]: e["t"] for e in result["events"]}
    return t.get(first), t.get(last, result["exit_at"])


def stalls_in(stalls, t0, t1):
    """(longest ms, count over 100 ms) of the stalls that start inside [t0, t1]."""
    ms = [s["ms"] for s in stalls if t0 is not None and t0 <= s["start"] <= t1]
    return (max(ms) if ms else 0.0), sum(m > 100 for m in ms)


def report(result, phases):
    t = {e["event"]: e["t"] for e in result["events"]}
    for label, first, timeline, findings, last in phases:
        t0, t1 = t.get(first), t.get(last, result["exit_at"])
        if t0 is None:
            print(f"  {label}: did not start", flush=True)
            continue
        pmax, pn = stalls_in(result["pings"], t0, t1)
        bmax, bn = stalls_in(result["beats"], t0, t1)
        to_tl = t[timeline] - t0 if timeline in t else float("nan")
        to_f = t[findings] - t0 if findings in t else float("nan")
        since = (f" ({t[timeline] - t['start']:.1f} s from the command's start)"
                 if first == "window" and timeline in t and "start" in t else "")
        # (a probe that never got an answer would say "longest 0 ms" too: the count says not)
        print(f"  {label}: X ping ({result['answered']} answered in the run): longest "
              f"{pmax:.0f} ms, {pn} over 100 ms · heartbeat: "
              f"longest {bmax:.0f} ms, {bn} over 100 ms · timeline {to_tl:.1f} s{since}, "
              f"findings {to_f:.1f} s", flush=True)


def cache_left(cache_dir):
    """What the cache folder holds: entries, and temporaries left half-written."""
    files = sorted(p.name for p in Path(cache_dir).glob("*")) + \
        sorted(p.name for p in Path(cache_dir).glob(".*"))
    return [f for f in files if f.endswith(".lpbundle")], [f for f in files if ".tmp" in f]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--cold", nargs="+", help="the run opened on the command line")
    ap.add_argument("--open", nargs="*", default=[], help="then File → Open of these")
    ap.add_argument("--cached", action="store_true", help="then the cold run again, cached")
    ap.add_argument("--close-after", type=float, help="close this many seconds into a load")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--xvfb", action="store_true", help="start Xvfb and openbox for the run")
    args = ap.parse_args(argv)
    if args.child:
        return child(json.loads(args.child))
    display = Display(args.xvfb)
    tmp = Path(tempfile.mkdtemp(prefix="freeze_probe_"))
    try:
        probe = build_probe(tmp)
        files = [os.path.abspath(f) for f in args.cold]
        more = [os.path.abspath(f) for f in args.open]
        for k in range(args.repeat):
            cache = tmp / f"cache{k}"
            cache.mkdir()
            r = run_step("cold", {"files": files, "open": more}, display, probe, cache)
            print(f"run {k + 1}: view {' '.join(args.cold)} (cold cache)"
                  + (f", then File → Open {' '.join(args.open)}" if more else ""), flush=True)
            report(r, [("cold open", "window", "first_timeline", "first_findings",
                        "open_start" if more else "closing")]
                   + ([("File → Open", "open_start", "open_timeline", "open_findings",
                        "closing")] if more else []))
            if r["stderr"].strip():
                print("  stderr: " + r["stderr"].strip().splitlines()[-1][:200])
            if args.cached:
                r = run_step("cached", {"files": files}, display, probe, cache)
                print(f"run {k + 1}: view {' '.join(args.cold)} (cached)", flush=True)
                report(r, [("cached open", "window", "first_timeline", "first_findings",
                            "closing")])
            if args.close_after is not None:
                cache = tmp / f"close{k}"
                cache.mkdir()
                target = more or files
                r = run_step("close", {"files": target, "stay": True}, display, probe, cache,
                             close_after=args.close_after)
                gone = r["exit_at"] - r["closed_at"] if r["closed_at"] else float("nan")
                entries, temps = cache_left(cache)
                t = {e["event"]: e["t"] for e in r["events"]}
                phase = "after the timeline" if "first_timeline" in t and \
                    t["first_timeline"] < (r["closed_at"] or 0) else "mid-load"
                print(f"run {k + 1}: view {' '.join(str(x) for x in target)} closed "
                      f"{args.close_after} s after its window showed ({phase}): process gone "
                      f"{gone:.2f} s after the close; cache: {len(entries)} entries, "
                      f"{len(temps)} temporaries left", flush=True)
    finally:
        display.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
