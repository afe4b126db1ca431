"""Checks on the set of rank files given together: a rank twice, ranks missing, other runs."""

from __future__ import annotations

SAME_RUN_ZERO_TIME_NS = 60 * 10**9  # ranks of one run start within a minute of each other


def cross_file_problems(ranks):
    """Warnings about the set of files: a rank twice, ranks missing, files of other runs."""
    out = []
    by_rank = {}
    for r in ranks:
        by_rank.setdefault(r["rank"], []).append(r["file"])
    for rank, files in sorted(by_rank.items()):
        if len(files) > 1:
            out.append(f"warning: rank {rank} is in {len(files)} files ({', '.join(files[:3])}); "
                       "files of different runs mixed?")
    legion = [r for r in ranks if r.get("format_version")]
    sizes = sorted({int(r["num_nodes"]) for r in legion})
    if len(sizes) > 1:
        out.append(f"warning: the files come from runs of {' and '.join(map(str, sizes))} "
                   "ranks; files of different runs mixed?")
    elif sizes and 1 < sizes[0] <= 1 << 16:
        missing = sorted(set(range(sizes[0])) - set(by_rank))
        if missing:
            shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
            out.append(f"warning: {len(missing)} of the run's {sizes[0]} ranks have no "
                       f"readable file (rank {shown}); the timeline shows the others only")
    zts = [r for r in legion if r["zero_time"]]
    if zts:
        lo = min(zts, key=lambda r: r["zero_time"])
        hi = max(zts, key=lambda r: r["zero_time"])
        if hi["zero_time"] - lo["zero_time"] > SAME_RUN_ZERO_TIME_NS:
            out.append(f"warning: {hi['file']} and {lo['file']} started "
                       f"{(hi['zero_time'] - lo['zero_time']) / 1e9:.0f} s apart: files of "
                       "different runs mixed?")
    return out
