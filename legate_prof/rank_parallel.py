"""Read and build each rank's log in its own process, then merge the ranks' models.

Ranks are independent until they are merged, so each worker reads one file and builds its
model alone; it hands the arrays back as a bundle file (``bundle.py``), which the parent maps
rather than unpickles.  The merge (``model_merge.py``) only renumbers and concatenates.  Where
it cannot give what one build of all files gives, the caller builds them all at once instead.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed

# Below this much input, starting workers costs more than it saves.
PARALLEL_MIN_BYTES = 48 << 20


def worker_count(paths, total_bytes, workers=None):
    """How many processes to build ``paths`` with (1: build in this process).

    ``workers`` (or the environment's ``LEGATE_PROF_WORKERS``) overrides the choice; by default,
    one per rank file up to the cores, when there are two files or more and enough bytes."""
    if workers is None:
        env = os.environ.get("LEGATE_PROF_WORKERS", "")
        if env.strip().isdigit():
            workers = int(env)
    if workers is not None:
        return max(1, min(int(workers), len(paths)))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if len(paths) < 2 or total_bytes < PARALLEL_MIN_BYTES or (cores or 1) < 2:
        return 1
    return min(len(paths), cores)


def _build_rank(path, out, stack):
    """In a worker: read one rank's log, build its model, write it to ``out``."""
    from .bundle import write_bundle
    from .errors import ProfileError
    from .legion_reader import LegionProfReader
    from .model_builder import build_model
    try:
        log = LegionProfReader(path).read()
        complete = len(log.table("MachineDesc")) > 0
        model = build_model([log], warnings=[str(w) for w in log.warnings], stack=stack,
                            check_files=False)
        write_bundle(model, out, indexes=False)
        return {"path": path, "error": None, "complete": complete}
    except ProfileError as e:
        return {"path": path, "error": str(e), "complete": False}


def build_in_parallel(paths, stack=True, workers=2, progress=None):
    """The model of Legion Prof logs built one rank per process; None when they must be
    built together (a file without its machine description, lanes shared between ranks, a
    worker that died), so that the caller does that."""
    from .bundle import read_bundle
    from .model_merge import CannotMerge, merge_models
    tmp = tempfile.mkdtemp(prefix="legate_prof_ranks_")
    try:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["legate_prof.model_builder", "legate_prof.bundle"])
        results = {}
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            futures = {pool.submit(_build_rank, p, os.path.join(tmp, f"{i}.lpb"), stack): i
                       for i, p in enumerate(paths)}
            for done, f in enumerate(as_completed(futures), 1):
                results[futures[f]] = f.result()
                if progress:
                    progress(done, len(paths), "built " + os.path.basename(
                        results[futures[f]]["path"]))
        if any(r["error"] or not r["complete"] for r in results.values()):
            return None  # a damaged file: the serial path reports it as it always does
        return merge_models([read_bundle(os.path.join(tmp, f"{i}.lpb"))
                             for i in range(len(paths))])
    except (CannotMerge, OSError, RuntimeError, EOFError, MemoryError):
        return None  # BrokenProcessPool is a RuntimeError
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # mapped bundles stay readable until unmapped
