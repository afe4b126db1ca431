"""Read and build the ranks' logs in worker processes, then merge the ranks' models.

Ranks are independent until they are merged, so each worker reads its job's files (one big
rank, or a run of consecutive small ones: ``rank_jobs``) and builds their model alone; it
hands the arrays back as a bundle file (``bundle.py``), which the parent maps rather than
unpickles.  The merge (``assemble.rank_merge``) only renumbers and concatenates.  Where it
cannot give what one build of all files gives, the caller builds them all at once instead.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import re
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import threading

# The workers yield the cores to the process that waits for them whenever it has work: a
# window opening, its progress, a terminal.  Idle, it leaves them all the cores.
WORKER_NICENESS = 10

def lower_this_thread(niceness=WORKER_NICENESS):
    """Lower the calling thread's scheduling priority to ``niceness``: a thread of a process
    that has something better to do with its cores (a window's load, its cache writer) gives
    way to the process's own thread.  Linux schedules threads apart; a no-op elsewhere."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid),
                                                 niceness))
    except (AttributeError, OSError):
        pass


# Below this much input, starting workers costs more than it saves.  Each worker starts an
# interpreter, and the parent then joins what the ranks left open of the event graph, which
# in a real run is most of it (60 % of each rank's vertices in a review's 3-rank stencil:
# Legion's collective events), serially.  On two cores (`stats` / `critical --no-cache`, the
# workers against one process): a real 3-rank run of 107 MB 2.5 / 3.4 s against 1.6 / 2.8 s;
# generated logs of 114 MB even (1.1 s); of 202 MB 1.4 / 1.5 s against 1.9 / 2.2 s; of
# 252 MB in 2 ranks 1.7 / 1.8 s against 2.3 / 2.8 s.  (48 MB until 2026-12-02.)
PARALLEL_MIN_BYTES = 160 << 20

# A worker's job by default: consecutive ranks' files of at least this much, built as one
# model (a rank alone where its file is that big).  Each job has its own fixed cost — a
# build's few hundred passes, a bundle written and mapped, its links joined to the others'
# — which small ranks do not repay: 1,000 ranks of 2,000 items, one a job, took 30 s of CPU
# for ``stats`` (one process: 16 s).
BATCH_BYTES = 48 << 20


def forced_workers(workers=None):
    """The number of workers asked for (``workers``, else the environment's
    ``LEGATE_PROF_WORKERS``), or None where the choice is ours."""
    if workers is None:
        env = os.environ.get("LEGATE_PROF_WORKERS", "")
        if env.strip().isdigit():
            workers = int(env)
    return workers


def worker_count(paths, total_bytes, workers=None):
    """How many processes to build ``paths`` with (1: build in this process).

    ``workers`` (or the environment's ``LEGATE_PROF_WORKERS``) overrides the choice (and each
    rank is then a job of its own); by default, one per job (``rank_jobs``) up to the cores,
    when there are two jobs or more and enough bytes."""
    workers = forced_workers(workers)
    if workers is not None:
        return max(1, min(int(workers), len(paths)))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if len(paths) < 2 or total_bytes < PARALLEL_MIN_BYTES or (cores or 1) < 2:
        return 1
    return max(1, min(len(rank_jobs(paths)), cores))


def job_bytes(workers=None):
    """The least bytes of a worker's job: ``BATCH_BYTES``, or 0 (a rank a job) where the
    number of workers was asked for."""
    return 0 if forced_workers(workers) is not None else BATCH_BYTES


def rank_jobs(paths, batch_bytes=BATCH_BYTES):
    """``paths`` (positions into it) in jobs of consecutive ranks — by the number in each
    file's name, else as given: the ranks of two jobs must not interleave for their models
    to merge — of at least ``batch_bytes`` each (a gzipped log counted at ten times its
    size), the last joined to the one before when under half that."""
    sizes = [_build_bytes(p) for p in paths]
    jobs, job, size = [], [], 0
    for i in sorted(range(len(paths)), key=lambda i: _rank_key(paths[i], i)):
        job.append(i)
        size += sizes[i]
        if size >= batch_bytes:
            jobs.append(job)
            job, size = [], 0
    if job:
        if jobs and 2 * size < batch_bytes:
            jobs[-1].extend(job)
        else:
            jobs.append(job)
    return jobs


def _even_batch(paths, batch_bytes, workers):
    """``batch_bytes`` made a little smaller where that gives each worker as many jobs (6
    jobs, not 5, for 2 workers: the last job no longer alone on one worker's time)."""
    total = sum(_build_bytes(p) for p in paths)
    if batch_bytes <= 0 or total <= 0:
        return batch_bytes
    n = -(-total // batch_bytes)
    n = -(-n // workers) * workers
    return total // n


def _rank_key(path, i):
    m = re.search(r"(\d+)(?:\.[A-Za-z]+)*$", os.path.basename(os.fspath(path)))
    return (0, int(m.group(1)), i) if m else (1, 0, i)


def _build_bytes(path):
    """A log's bytes as a build sees them: a gzipped one counted at ten times its size."""
    try:
        return os.path.getsize(path) * (10 if str(path).endswith(".gz") else 1)
    except OSError:
        return 0


def _build_rank(paths, out, mode, prepare=""):
    """In a worker: read a job's logs (one rank's, or a few ranks') and build their model;
    write it to ``out`` as a bundle (mode "stack" or "flat": rows stacked or not).
    ``prepare`` ("module:function", or "") names what the model is also worth to an
    analysis: named arrays, written beside it (``prepared_path``; the caller names the
    analysis, so this layer imports none).  False for a file that cannot be read or has no
    machine description (the caller then builds all files together, which reports it as it
    always does), or where a rank has no processor of its own (its log cut short: the logs
    of the other ranks describe them, read together)."""
    from legate_prof.assemble.model_builder import build_model
    from legate_prof.errors import ProfileError
    from legate_prof.read.legion_log import LegionProfReader
    try:
        logs = []
        for path in paths:
            logs.append(LegionProfReader(path).read())
            if len(logs[-1].table("MachineDesc")) == 0:
                return False  # numbered after the others: only a build of all files can
        model = build_model(logs, warnings=[str(w) for log in logs for w in log.warnings],
                            stack=mode == "stack", check_files=False)
        if not {r["rank"] for r in model.ranks} <= set(model.procs["rank"].tolist()):
            return False  # (a log cut before its processors: another rank's log names them)
        del logs[:]  # (their tables and mapped bytes: ~a fifth of a worker's peak, at ``prepare``)
        from legate_prof.store.bundle import write_bundle
        handed = _prepare(model, prepare, prepared_path(out)) if prepare else model
        write_bundle(handed, out, indexes=False, handover=True)
        return True
    except ProfileError:
        return False


def _prepare(model, function, out):
    """``function(model)``'s arrays written to ``out``; nothing where it fails (the analysis
    then reads the model itself, and says what is wrong as it always does).  The model to
    hand over: ``model``, or the one ``function`` returned beside its arrays (``(arrays,
    model)``: a copy holding only what the analysis reads of it in the parent, which then
    maps less — only with the arrays that say so, never where they failed)."""
    import importlib
    from legate_prof.load.array_file import write_arrays
    module, name = function.split(":")
    try:
        got = getattr(importlib.import_module(module), name)(model)
        arrays, handed = got if isinstance(got, tuple) else (got, model)
        write_arrays(out, arrays)
        return handed
    except Exception:  # noqa: BLE001 - an analysis's shortcut, never the build's failure
        if os.path.exists(out):
            os.unlink(out)
        return model


def _give_back_freed_memory():
    """Return the memory a job freed to the system (glibc keeps freed heap pages for the
    process: the next job's log, mapped whole, came on top of the last job's peak)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # (another C library: its own way)


def prepared_path(bundle):
    return bundle + ".prepared"


def _worker(jobs, mode, prepare=""):
    """One worker process: its share of the jobs, one after the other; a line on stdout per
    job done ("ok N" or "fail N"), what ``prepare`` names made of each job's model."""
    if hasattr(os, "nice"):
        os.nice(WORKER_NICENESS)
    from legate_prof.read.legion_log import LegionProfReader
    LegionProfReader.mapped = True  # (a log cut short under the map kills this worker alone:
    for i, paths, out in jobs:  # its parent then reads the ranks itself, from copies)
        ok = _build_rank(paths, out, mode, prepare)
        _give_back_freed_memory()
        print(("ok" if ok else "fail"), i, flush=True)
        if not ok:
            return 3
    return 0


def _run_workers(paths, jobs, outs, mode, workers, progress, handover, prepare="",
                 on_done=None):
    """Build ``paths``, job by job (``jobs``: lists of positions into ``paths``), into
    ``outs`` (one a job) in ``workers`` fresh interpreters; True when all did.
    ``on_done(k)``: job ``k`` is built, told as it is (in this thread).

    Fresh interpreters (``python -m legate_prof.load.rank_workers``), not forks: a fork would copy
    the viewer's threads' locks, and multiprocessing's spawn would run the caller's own script
    again in each worker when it has no ``__main__`` guard.  Each takes a share of the jobs
    (biggest first, to the least loaded), so few interpreters start."""
    shares = [[] for _ in range(workers)]
    load = [0] * workers
    size = [sum(os.path.getsize(paths[i]) for i in job) for job in jobs]
    for k in sorted(range(len(jobs)), key=lambda k: -size[k]):
        w = load.index(min(load))
        shares[w].append((k, [paths[i] for i in jobs[k]], outs[k]))
        load[w] += size[k]
    ahead = _ReadAhead([p for turn in itertools.zip_longest(*shares) for job in turn if job
                        for p in job[1]], 2 * workers * max(len(j) for j in jobs))
    procs = []
    try:
        for share in shares:
            procs.append(handover.start(
                [sys.executable, "-m", "legate_prof.load.rank_workers", json.dumps(share), mode,
                 prepare or ""]))
        done, failed, last = 0, False, "building ranks"
        streams = {p.stdout.fileno(): p for p in procs}
        while streams and not failed:
            ready, _, _ = select.select(list(streams), [], [], 0.1)
            if not ready and progress:  # a tick: a progress window keeps repainting
                progress(done, len(paths), last)
            for fd in ready:
                line = streams[fd].stdout.readline()
                if not line:
                    del streams[fd]
                    continue
                word, k = line.split()
                failed = failed or word != "ok"
                job = jobs[int(k)]
                if not failed and on_done is not None:
                    on_done(int(k))
                done += len(job)
                for _ in job:
                    ahead.file_done()
                names = os.path.basename(paths[job[0]]) + (
                    f" … {os.path.basename(paths[job[-1]])}" if len(job) > 1 else "")
                last = f"built {names} ({done} of {len(paths)} ranks)"
                if progress:
                    progress(done, len(paths), last)
        return not failed and all(p.wait() == 0 for p in procs) and done == len(paths)
    finally:
        ahead.stop()
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            p.stdout.close()


class _ReadAhead:
    """Reads the rank files into the page cache in the order the workers take them, a few
    files ahead of the workers, while they compute.  A file not read since it was written
    (the page cache dropped it) then comes from disk at the disk's speed, overlapped with
    the builds, instead of a page at a time as a worker touches it.  For files already
    cached this costs one copy (about 0.1 s per GB), in a thread of a process that waits."""

    CHUNK = 4 << 20

    def __init__(self, paths, ahead):
        self._paths = paths
        self._room = threading.Semaphore(ahead)
        self._stop = False
        self.thread = threading.Thread(target=self._run, name="legate_prof read-ahead",
                                       daemon=True)
        self.thread.start()

    def file_done(self):
        self._room.release()

    def stop(self):
        self._stop = True
        self._room.release()

    def _run(self):
        buf = bytearray(self.CHUNK)
        for path in self._paths:
            self._room.acquire()
            if self._stop:
                return
            self._read(path, buf)

    def _read(self, path, buf):
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return  # a pipe's bytes are the worker's to read (and opening one may block)
            with open(path, "rb", buffering=0) as f:
                while not self._stop and f.readinto(buf):
                    pass
        except OSError:
            pass  # the worker reports what is wrong with the file


def build_in_parallel(paths, stack=True, workers=2, progress=None, ranked=False, prepare=None,
                      batch_bytes=None, partial=None):
    """The model of Legion Prof logs built by ``workers`` processes, a job of consecutive
    ranks of at least ``batch_bytes`` at a time (``rank_jobs``; default ``BATCH_BYTES``)
    (``ranked``: a ``RankSet`` of the jobs' models, unmerged); None when they must be built
    together (a file without its machine description or that cannot be read, lanes shared
    between ranks, ranks of two jobs that interleave, a worker that died), so that the
    caller does that.  ``prepare`` ("module:function"): what a worker also makes of a rank's
    model for an analysis (named arrays), kept with the ranks of a ``RankSet``
    (``prepared_of``).  ``partial(ranks_so_far, files)`` (``ranked``, no ``prepare``): a
    ``RankSet`` of the ranks built so far and how many rank files there are, once, where
    the rest takes a while yet (``partial_due``): a window shows them meanwhile."""
    from legate_prof.assemble.rank_merge import CannotMerge, merge_opened
    from legate_prof.errors import ProfileError
    from legate_prof.store.bundle_file import read_bundle, room_for_open_files
    jobs = rank_jobs(paths, _even_batch(paths, BATCH_BYTES if batch_bytes is None
                                        else batch_bytes, workers))
    handover = Handover("ranks", room=bundle_room(paths))
    outs = [os.path.join(handover.dir, f"{k}.lpbundle") for k in range(len(jobs))]
    ranked = ranked and room_for_open_files(2 * len(outs) if prepare else len(outs))
    mapped = {}  # job -> its model, mapped as it was built (for ``partial``)
    on_done = None
    if partial is not None and ranked and not prepare:
        on_done = _Partial(partial, jobs, outs, workers, mapped, len(paths)).job_done
    try:
        if not _run_workers(paths, jobs, outs, "stack" if stack else "flat", workers, progress,
                            handover, prepare if ranked else "", on_done):
            return None
        models = [mapped[k] if k in mapped else read_bundle(o, check=False)
                  for k, o in enumerate(outs)]
        if not _ranks_apart(models):
            return None  # (a rank given twice: one process leaves the copies out, and says so)
        if ranked:  # the ranks stay mapped (their files go when the hand-over closes)
            from legate_prof.assemble.rank_set import RankSet
            if prepare:
                _keep_prepared(models, outs)
            return RankSet(models)
        return merge_opened(len(outs), lambda i: models[i])
    except (CannotMerge, OSError, ValueError, ProfileError):
        return None  # (a bundle that went missing or is cut: the caller builds in one process)
    finally:
        handover.close(later=True)  # mapped bundles stay readable until unmapped


# a window shows the ranks built so far where the rest takes about this long or more: sooner,
# the full timeline would replace them before they were looked at
PARTIAL_MIN_S = 0.5


def partial_due(elapsed_s, done, total, workers):
    """Whether ranks built so far are worth showing before the rest: once the first round
    of jobs is in (a job for each worker), where at least another round is left and a round
    took ``PARTIAL_MIN_S`` or more (10 ranks on 2 cores: 2 shown after ~1 s, the 10 after
    ~4 s)."""
    return done >= workers and total - done >= workers and elapsed_s >= PARTIAL_MIN_S


class _Partial:
    """``build_in_parallel``'s ``partial``: each job's model mapped as it is built, and the
    ranks so far handed over once (``partial_due``), as a ``RankSet``, with how many rank
    files the whole has (``files``)."""

    def __init__(self, partial, jobs, outs, workers, mapped, files):
        import time
        self._partial, self._jobs, self._outs, self._files = partial, jobs, outs, files
        self._workers, self._mapped = workers, mapped
        self._started, self._clock = time.monotonic(), time.monotonic
        self._given = False

    def job_done(self, k):
        from legate_prof.store.bundle_file import read_bundle
        if self._given:
            return
        try:
            self._mapped[k] = read_bundle(self._outs[k], check=False)
        except Exception:  # noqa: BLE001 - a preview only: the build reads it again, and
            return         # says what is wrong as it always does
        if not partial_due(self._clock() - self._started, len(self._mapped), len(self._jobs),
                           self._workers):
            return
        self._given = True
        try:
            from legate_prof.assemble.rank_set import RankSet
            built = [self._mapped[j] for j in sorted(self._mapped)]
            if _ranks_apart(built):
                self._partial(RankSet(built), self._files)
        except Exception:  # noqa: BLE001 - a preview that cannot be made is not shown
            pass


_PREPARED = {}  # id of a model's "start" column -> (a weak reference to it, prepared arrays)


def _ranks_apart(models):
    """Whether no rank is in two of the jobs' models: 2,000 cut-short copies of rank 0 (no
    lanes to collide) were merged as 2,000 ranks here, and left out in one process."""
    ranks = [r.get("rank") for m in models for r in m.ranks]
    return len(ranks) == len(set(ranks))


def _keep_prepared(models, outs):
    from legate_prof.load.array_file import read_arrays
    for model, out in zip(models, outs):
        path = prepared_path(out)
        if os.path.exists(path):
            keep_prepared(model, read_arrays(path))


def keep_prepared(model, arrays):
    """Keep ``arrays`` (what a worker prepared from ``model``) with the model, and with every
    copy of it that shares its items (``evolve``, a ``RankSet``), for as long as it lives."""
    import weakref
    column = model.items["start"]
    key = id(column)
    _PREPARED[key] = (weakref.ref(column, lambda _, key=key: _PREPARED.pop(key, None)), arrays)


def prepared_of(model):
    """The arrays a worker prepared from ``model`` (``build_in_parallel``'s ``prepare``), or
    None."""
    got = _PREPARED.get(id(model.items.get("start")))
    if got is None or got[0]() is not model.items.get("start"):
        return None
    return got[1]


class Handover:
    """The directory where workers leave their results, and the workers.

    Closed when the build is done, or when the process ends first: ``view`` closed while it
    loads ends with ``os._exit`` after the atexit handlers, and without this the workers
    would run on and their files stay.  A process killed outright leaves its directory
    behind: the next one on this host removes the directories of processes that no longer
    run (the name holds the host and the pid)."""

    PREFIX = "legate_prof_handover_"
    KINDS = ("ranks", "stats")  # ("stats": left by earlier versions, swept all the same)

    def __init__(self, kind, room=0):
        assert kind in self.KINDS
        sweep_handovers()
        base = handover_base(room)
        self.dir = tempfile.mkdtemp(prefix=f"{self.PREFIX}{kind}_{_host()}_{os.getpid()}_",
                                    dir=base)
        self.procs = []
        self._lock = threading.Lock()
        self._closed = False
        atexit.register(self.close)

    def start(self, argv):
        """A worker process, unless the hand-over is closed (the process is ending)."""
        with self._lock:
            if self._closed:
                raise OSError("the build was stopped")
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, env=_worker_env(), text=True)
            self.procs.append(p)
            return p

    def close(self, later=False):
        """Stop the workers still running and remove the directory (in a thread: ``later``;
        a directory left by ``os._exit`` meanwhile goes at the next sweep)."""
        atexit.unregister(self.close)
        with self._lock:
            self._closed = True
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        if later:
            threading.Thread(target=shutil.rmtree, args=(self.dir,),
                             kwargs={"ignore_errors": True}, name="legate_prof cleanup").start()
            # a process that ends at once meanwhile (os._exit after its atexit handlers: the
            # viewer closed) removes what that thread had not yet
            atexit.register(shutil.rmtree, self.dir, ignore_errors=True)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


# A folder in memory (tmpfs) for the ranks' bundles, where there is room: the workers write
# a bundle a little bigger than its log and the parent maps it; on a disk's file system the
# kernel's share of that (allocating the file's pages, then their journal) cost a second of
# the 8 of ``stats`` at 10 ranks x 1 M items.
MEMORY_FOLDER = "/dev/shm"


def bundle_room(paths):
    """Bytes the ranks' bundles of ``paths`` may need: twice their logs' (``_build_bytes``)."""
    return 2 * sum(_build_bytes(p) for p in paths)


def handover_bases():
    """The folders hand-over directories are made in (``handover_base``)."""
    from legate_prof.output_file import temporary_directory
    return [MEMORY_FOLDER, temporary_directory()] if _memory_folder_usable() else [
        temporary_directory()]


def _memory_folder_usable():
    return (os.environ.get("TMPDIR") is None and os.path.isdir(MEMORY_FOLDER)
            and os.access(MEMORY_FOLDER, os.W_OK | os.X_OK))


def handover_base(room):
    """The memory folder for a hand-over of ``room`` bytes where it and the machine's free
    memory have twice that (and ``TMPDIR`` names no folder of the user's choice), else the
    temporary folder."""
    from legate_prof.output_file import temporary_directory
    if room and _memory_folder_usable():
        try:
            from legate_prof.load.early_analysis import available_memory
            st = os.statvfs(MEMORY_FOLDER)
            if min(st.f_bavail * st.f_frsize, available_memory() or 0) >= 2 * room:
                return MEMORY_FOLDER
        except (OSError, ValueError):
            pass
    return temporary_directory()


def _host():
    """This host's name as it may stand in a file name between underscores."""
    import re
    import socket
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"


def sweep_handovers():
    """``sweep_orphans`` of every folder hand-overs are made in: a command's first step, for
    what one stopped by SIGKILL left (the ranks' bundles in memory, until a later parallel
    build swept them)."""
    for base in handover_bases():
        sweep_orphans(base)


def sweep_orphans(base):
    """Remove hand-over directories left in ``base`` by processes of this host and user that
    no longer run.  Only on POSIX (elsewhere, signal 0 is not a question)."""
    if os.name != "posix":
        return
    try:
        names = [n for n in os.listdir(base) if n.startswith(Handover.PREFIX)]
    except OSError:
        return
    host = _host()
    for name in names:
        parts = name[len(Handover.PREFIX):].split("_", 3)
        if (len(parts) != 4 or parts[0] not in Handover.KINDS or parts[1] != host
                or not parts[2].isdigit() or int(parts[2]) == os.getpid()):
            continue
        path = os.path.join(base, name)
        try:
            if not os.path.isdir(path) or os.stat(path).st_uid != os.getuid():
                continue
            os.kill(int(parts[2]), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except (OSError, OverflowError):
            continue  # alive (or not ours to ask): leave it


# glibc's allocator, in a worker: a rank's build makes and frees arrays of millions of items
# over and over, and by default returns each to the kernel (its own mapping, or the heap
# trimmed) to fault it in again page by page at the next: half the worker's time went to the
# kernel.  Kept for reuse instead, within a worker's life (one rank file after the other).
WORKER_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20),  # (glibc's upper limit)
                 "MALLOC_TRIM_THRESHOLD_": str(1 << 30), "MALLOC_TOP_PAD_": str(64 << 20)}


# mallopt's numbers for the settings above (glibc's malloc.h)
_MALLOPT = {"MALLOC_TRIM_THRESHOLD_": -1, "MALLOC_TOP_PAD_": -2, "MALLOC_MMAP_THRESHOLD_": -3}


_NO_HUGE_PAGES = []  # (True once ``no_huge_pages`` set it: the workers' environment drops it)


def no_huge_pages():
    """numpy in this process asks the kernel for no huge pages (``cli._no_huge_pages``),
    said where numpy reads it as it is imported: its environment.  Not the workers': they
    keep numpy's default, as before (``_worker_env``)."""
    os.environ["NUMPY_MADVISE_HUGEPAGE"] = "0"
    _NO_HUGE_PAGES.append(True)


def huge_pages_as_before():
    """The environment as before ``no_huge_pages`` (a command run in a caller's process
    ends: a later ``record`` there would hand the setting to legate, a later command take
    it for the user's)."""
    if _NO_HUGE_PAGES:
        os.environ.pop("NUMPY_MADVISE_HUGEPAGE", None)
        _NO_HUGE_PAGES.clear()


def reuse_freed_memory():
    """This process's allocator set as a worker's (``WORKER_MALLOC``), where the user set
    none: a command's own analysis makes and frees column-sized arrays too (``stats`` of 10
    ranks x 1 M items: 0.9 -> 0.45 s of the kernel's time in the parent).  Not for a
    process that lives on after its work (the window): what it freed would stay its own."""
    if any(k.startswith("MALLOC_") for k in os.environ):
        return
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        for name, value in WORKER_MALLOC.items():
            libc.mallopt(_MALLOPT[name], int(value))
    except (OSError, AttributeError):
        pass  # (another C library: its own way)


def _worker_env():
    """The parent's environment, with this package importable however it was found (and
    the allocator's settings above, where the user set none)."""
    env = dict(os.environ)
    if _NO_HUGE_PAGES:  # (this process's own setting, not the user's)
        env.pop("NUMPY_MADVISE_HUGEPAGE", None)
    if not any(k.startswith("MALLOC_") for k in env):
        env.update(WORKER_MALLOC)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


if __name__ == "__main__":
    sys.exit(_worker(json.loads(sys.argv[1]), sys.argv[2], *sys.argv[3:4]))
