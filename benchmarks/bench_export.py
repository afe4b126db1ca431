"""Export throughput and peak memory on a generated profile (not a test).

    python benchmarks/bench_export.py --items 2000000 [--ranks 4] [--formats chrome,parquet]
    python benchmarks/bench_export.py [--as-cli] FILES...   # given logs (fixtures/generate.py)
    python benchmarks/bench_export.py --per-rank-folder DIR [--query SQL]

Each format runs in its own process: load the model (RSS after load = the model), reset the
peak, export; the extra peak over that RSS is what the export itself holds (one chunk +
buffers), and *critical* how long of the export the critical path took (the query API's
links and the run's path, computed once on the profile exported).  ``--as-cli`` loads as
``legate_prof export`` does: Parquet and DuckDB get the ranks unmerged (``ranked=True``).

``--per-rank-folder DIR`` (a folder of per-rank bundles, ``convert --per-rank``): a group-by
over the items with ``legate_prof sql`` on the folder (rank by rank, no merged model), the
same query on one merged model (what ``sql`` did before), ``export --format parquet`` of the
folder, and ``sql`` on that export folder; each in its own process, with its wall time, its
peak RSS (``VmHWM``, as ``/usr/bin/time -v`` reports it) and its RSS once the ranks are open
(the loader's part), of which mapped file pages (``RssFile``: a bundle's pages that its checks
read count as resident until let go; they are page cache, which the kernel can take back).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def rss_mib(field="VmHWM"):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak():
    """Make VmHWM restart from the current RSS (Linux: write 5 to clear_refs)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def timed_critical_path():
    """Wrap the query API's critical-path computations so that their time is summed up
    (``spent[0]``), if this version of the exports computes them."""
    spent, depth = [0.0], [0]
    try:
        from legate_prof.query import critical
    except ImportError:
        return spent
    for name in ("links", "run_path"):
        f = getattr(critical.CriticalPaths, name)

        def timed(self, *a, _f=f, **k):  # (the outermost call: run_path calls links)
            t = time.perf_counter()
            depth[0] += 1
            try:
                return _f(self, *a, **k)
            finally:
                depth[0] -= 1
                if not depth[0]:
                    spent[0] += time.perf_counter() - t
        setattr(critical.CriticalPaths, name, timed)
    return spent


def one(fmt, out, files, as_cli=False):
    from legate_prof.export import export
    from legate_prof.load.loader import load_profile
    model = load_profile(files, use_cache=False,
                         ranked=as_cli and fmt in ("parquet", "duckdb"))
    after_load = rss_mib("VmRSS")
    spent = timed_critical_path()
    reset_peak()
    t = time.perf_counter()
    export(model, fmt, out)
    dt = time.perf_counter() - t
    peak = rss_mib("VmHWM")
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out)) \
        if os.path.isdir(out) else os.path.getsize(out)
    print(f"{fmt:<9}{model.n_items:>10}{dt:>9.2f} s{model.n_items / dt / 1e6:>9.2f} M items/s"
          f"{size / 2**20:>10.1f} MiB{after_load:>10.0f} MiB{peak - after_load:>10.0f} MiB"
          f"{spent[0]:>10.2f} s", flush=True)


QUERY = ("SELECT rank % 10 AS r10, kind, count(*) AS n, sum(duration_ns) AS total_ns "
         "FROM items GROUP BY ALL ORDER BY ALL")


def ranked_one(how, folder, query, out):
    """One measured run of ``how`` (see ``per_rank_folder``) in this process."""
    from legate_prof.export import export
    from legate_prof.export.duckdb_db import query as run_query, query_parquet
    from legate_prof.load.loader import load_profile
    t = time.perf_counter()
    opened = None
    if how == "sql-export":
        rows = query_parquet(out, query)[1]
    else:
        profile = load_profile([folder], ranked=how != "sql-merged")
        opened = rss_mib("VmHWM")
        mapped = rss_mib("RssFile")
        if how == "export":
            export(profile, "parquet", out)
            rows = []
        else:
            rows = run_query(profile, query)[1]
    dt = time.perf_counter() - t
    opened = "" if opened is None else f"{opened:.0f} MiB ({mapped:.0f} mapped)"
    print(f"{how:<12}{dt:>9.2f} s{rss_mib('VmHWM'):>10.0f} MiB{opened:>26}{len(rows):>7}",
          flush=True)


def per_rank_folder(folder, query):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "pq")
        print(f"{'run':<12}{'time':>11}{'peak RSS':>14}{'RSS, ranks opened':>26}{'rows':>7}")
        for how in ("sql", "sql-merged", "export", "sql-export"):
            subprocess.run([sys.executable, __file__, "--ranked-one", how, folder, query, out],
                           check=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--items", type=int, default=1_000_000)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--formats", default="chrome,perfetto,parquet,duckdb")
    p.add_argument("--one", nargs=2, metavar=("FORMAT", "OUT"), help=argparse.SUPPRESS)
    p.add_argument("--per-rank-folder", metavar="DIR",
                   help="a folder of per-rank bundles: sql and Parquet export rank by rank")
    p.add_argument("--query", default=QUERY, help="the query for --per-rank-folder")
    p.add_argument("--ranked-one", nargs=4, help=argparse.SUPPRESS)
    p.add_argument("--as-cli", action="store_true",
                   help="load as `legate_prof export` does (ranks unmerged for parquet, duckdb)")
    p.add_argument("files", nargs="*", help="logs to export (default: a generated profile)")
    a = p.parse_args()
    if a.one:
        return one(a.one[0], a.one[1], a.files, a.as_cli)
    if a.ranked_one:
        return ranked_one(*a.ranked_one)
    if a.per_rank_folder:
        return per_rank_folder(a.per_rank_folder, a.query)
    with tempfile.TemporaryDirectory() as d:
        from fixtures.synthetic import generate
        files = a.files or [str(f) for f in generate(os.path.join(d, "prof"), ranks=a.ranks,
                                                     items=a.items)]
        print(f"{'format':<9}{'items':>10}{'time':>11}{'throughput':>19}{'output':>14}"
              f"{'model RSS':>14}{'extra peak':>14}{'critical':>12}")
        for fmt in a.formats.split(","):
            out = os.path.join(d, f"out.{fmt}")
            subprocess.run([sys.executable, __file__, "--one", fmt, out, *files]
                           + ["--as-cli"] * a.as_cli, check=True)


if __name__ == "__main__":
    main()
