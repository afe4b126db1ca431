"""Scale benchmark (not a test): load, memory, bundle reopen and viewer frame times.

    python benchmarks/bench_scale.py                       # 1M and 10M items, 8 and 64 ranks
    python benchmarks/bench_scale.py --items 1000000 --ranks 8

Prints one table row per configuration; docs/performance.md holds the figures.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, {root!r})
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from legate_prof.load.loader import load_profile
from legate_prof.store.bundle_file import read_bundle
from legate_prof.store.bundle import write_bundle
paths, bundle, mode = json.loads(sys.argv[1])
out = {{}}
if mode == "load":
    t = time.perf_counter(); m = load_profile(paths); out["load_s"] = time.perf_counter() - t
    m._ensure_index()
    out["items"] = m.n_items
    out["model_bytes"] = m.memory_bytes()
    t = time.perf_counter(); write_bundle(m, bundle); out["bundle_write_s"] = time.perf_counter() - t
    out["bundle_mb"] = os.path.getsize(bundle) / 2**20
elif mode == "reopen":
    from legate_prof.viewer.screenshot import make_timeline
    t = time.perf_counter(); m = read_bundle(bundle); out["reopen_s"] = time.perf_counter() - t
    w = make_timeline(m, 1920, 1080, expand=["cpu", "gpu_dev", "utility"])
    w.grab()
    out["reopen_first_frame_s"] = time.perf_counter() - t
    out["items"] = m.n_items
elif mode == "frames":
    m = read_bundle(bundle)
    from legate_prof.viewer.screenshot import make_timeline
    sys.path.insert(0, os.path.join({root!r}, "benchmarks"))
    from frame_times import measure_frames
    w = make_timeline(m, 1920, 1080, expand=["cpu", "gpu_dev", "utility"])
    out.update(measure_frames(w, *m.time_range()))
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def child(paths, bundle, mode):
    code = CHILD.format(root=ROOT)
    p = subprocess.run([sys.executable, "-c", code, json.dumps([paths, bundle, mode])],
                       capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(p.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1])


def run(items, ranks, workdir):
    from fixtures.synthetic import generate
    d = os.path.join(workdir, f"r{ranks}_n{items}")
    t = time.perf_counter()
    paths = generate(d, ranks=ranks, items=items, seed=1)
    gen_s = time.perf_counter() - t
    size_mb = sum(os.path.getsize(p) for p in paths) / 2**20
    bundle = os.path.join(d, "run.lpbundle")
    load = child(paths, bundle, "load")
    reopen = child(paths, bundle, "reopen")
    frames = child(paths, bundle, "frames")
    row = {"items": load["items"], "ranks": ranks, "files_mb": round(size_mb, 1),
           "generate_s": round(gen_s, 2), "load_s": round(load["load_s"], 2),
           "load_peak_rss_mb": round(load["peak_rss_mb"]),
           "model_bytes_per_item": round(load["model_bytes"] / load["items"], 1),
           "bundle_mb": round(load["bundle_mb"], 1),
           "reopen_s": round(reopen["reopen_s"], 3),
           "reopen_first_frame_s": round(reopen["reopen_first_frame_s"], 3),
           "rss_after_first_frame_mb": round(reopen["peak_rss_mb"]),
           "rss_bytes_per_item": round(reopen["peak_rss_mb"] * 2**20 / load["items"], 1),
           **{k: round(v, 1) for k, v in frames.items() if k.startswith(("frame", "rects", "zoom"))}}
    print(json.dumps(row), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, nargs="*", default=[1_000_000, 10_000_000])
    ap.add_argument("--ranks", type=int, nargs="*", default=[8, 64])
    ap.add_argument("--workdir", default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=a.workdir) as w:
        for n in a.items:
            for r in a.ranks:
                run(n, r, w)


if __name__ == "__main__":
    main()
