"""Size and speed of the HTML report of a big profile, read from headless Chromium itself.

    .venv/bin/python benchmarks/bench_report.py --items 1000000

Prints: time to write the report, its size on disk, first paint (performance.now() when the
first complete frame was drawn, and the browser's first-contentful-paint), and the draw time
of each zoom/pan frame (the page's own ``lp-frame`` performance measures).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def folder_bytes(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--work", help="folder for the logs and the report (default: a temp dir)")
    ap.add_argument("--pictures", action="store_true", help="also render the PNG pictures")
    ap.add_argument("--reuse", action="store_true",
                    help="with --work: keep an existing report, measure only the browser")
    a = ap.parse_args(argv)
    work = Path(a.work or tempfile.mkdtemp(prefix="bench-report-"))
    logs = work / "logs"
    if not list(logs.glob("legate_*.prof")):
        subprocess.check_call([sys.executable, str(ROOT / "fixtures" / "generate.py"), "--items",
                               str(a.items), "--ranks", str(a.ranks), "-o", str(logs)],
                              stdout=subprocess.DEVNULL)
    files = sorted(str(p) for p in logs.glob("legate_*.prof"))

    from legate_prof.load.loader import load_profile
    from legate_prof.report import write_report
    from legate_prof.report.headless import Browser, why_no_browser
    out = work / "legate_prof"
    if not (a.reuse and (out / "index.html").is_file()):
        t = time.perf_counter()
        model = load_profile(files)
        t_load = time.perf_counter() - t
        t = time.perf_counter()
        done = write_report(model, out, pictures=a.pictures)
        t_write = time.perf_counter() - t
        print(f"profile: {model.n_items:,} items, {model.n_ranks} ranks, {model.n_lanes} lanes")
        print(f"load {t_load:.1f} s, write report {t_write:.1f} s: {done['levels']} levels, "
              f"{done['tiles']} tiles")
    print(f"report on disk: {folder_bytes(out) / 2**20:.1f} MiB")
    why = why_no_browser()
    if why:
        print(f"browser part skipped: {why}")
        return
    with Browser(width=1600, height=1000) as b:
        b.open(out / "index.html", timeout=120)
        b.wait_frames(60)
        first = b.evaluate("LP_firstPaint")
        fcp = b.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
        print(f"first complete paint {first:.0f} ms after navigation start "
              f"(first-contentful-paint {fcp or float('nan'):.0f} ms)")
        b.evaluate("performance.clearMeasures('lp-frame')")
        # zoom in 12 wheel steps at one point, pan by dragging, zoom out, arrow keys
        for _ in range(12):
            b.wheel(900, 300, -240)
            b.pump(0.03)
        b.wait_frames(30)
        for _ in range(6):
            b.drag(1000, 300, 700, 320, steps=6)
        b.wait_frames(30)
        b.evaluate("document.getElementById('timeline').focus()")
        for k in ("ArrowLeft", "ArrowRight", "ArrowRight", "ArrowDown", "ArrowUp"):
            b.key(k)
            b.pump(0.03)
        for _ in range(12):
            b.wheel(600, 300, 240)
            b.pump(0.03)
        b.wait_frames(30)
        frames = b.evaluate("performance.getEntriesByName('lp-frame').map(e => e.duration)")
        print("frames over 16 ms (index: ms):",
              ", ".join(f"{k}: {f:.0f}" for k, f in enumerate(frames) if f > 16) or "none")
        frames.sort()
        p95 = frames[int(0.95 * (len(frames) - 1))]
        print(f"zoom/pan frames: {len(frames)}, median {frames[len(frames) // 2]:.1f} ms, "
              f"p95 {p95:.1f} ms, max {frames[-1]:.1f} ms")
        if b.errors:
            print("browser errors:", *b.errors[:5], sep="\n  ")
    if not a.work:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    os.sys.stdout.flush()


if __name__ == "__main__":
    main()
