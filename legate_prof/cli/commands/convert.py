"""``legate_prof convert``: a profile as one bundle, or one bundle beside each rank's log.

Under a parallel launcher (``mpirun -n N legate_prof convert --per-rank DIR`` or ``srun``),
each process converts only its own ranks' files (rank ``r`` by process ``r % N``), so a
cluster converts each rank where its file lies, once."""

from __future__ import annotations

import os

from legate_prof.cli.arguments import add_files
from legate_prof.cli.common import (EXIT_USER_ERROR, input_files, load_with_progress, note, say,
                                    shown)
from legate_prof.errors import ProfileError
from legate_prof.output_file import check_output


def register(sub):
    c = sub.add_parser("convert", help="write the merged model as one .lpbundle file, or with "
                                       "--per-rank one bundle beside each rank's file")
    add_files(c)
    c.add_argument("-o", "--output", help="the bundle (default: beside a single file, "
                                          "named after it)")
    c.add_argument("--per-rank", action="store_true",
                   help="one bundle per rank, beside its log (with its runtime stream); on a "
                        "cluster run it under mpirun/srun: each process converts its own "
                        "ranks' files; `view DIR` opens them together")
    c.set_defaults(func=run)


def bundle_beside(path):
    name = os.path.basename(path)
    for ext in (".prof.gz", ".prof", ".gz"):
        if name.endswith(ext):
            name = name[: -len(ext)]
            break
    return os.path.join(os.path.dirname(path), name + ".lpbundle")


def _per_rank_jobs(inputs, share):
    """(files, bundle) per rank of ``inputs`` (this process's ranks under a launcher)."""
    from legate_prof.load.inputs import plan_inputs
    from legate_prof.load.rank_files import name_rank, per_rank_jobs
    if share is not None:  # another process's files (by their names) are not even opened
        inputs = [p for p in inputs
                  if name_rank(p) is None or name_rank(p) % share[1] == share[0]]
    paths, kinds, errors, warnings = plan_inputs(inputs)
    jobs, notes = per_rank_jobs(paths, kinds, share)
    for w in warnings + notes:
        note(w)
    out = []
    for job in jobs:
        log = next((p for p in job.files if kinds.get(p) != "runtime"), job.files[0])
        out.append((job.files, bundle_beside(log)))
    return out


def run(args):
    from legate_prof.cli.launcher import launcher_share
    from legate_prof.load.inputs import expand_inputs
    from legate_prof.store.bundle import write_bundle
    inputs = input_files(args)
    share = launcher_share()
    if args.per_rank:  # a directory's logs, each rank's converted beside them
        if args.output is not None:
            raise ProfileError(args.output, "--per-rank writes one bundle beside each rank's "
                                            "log; leave out -o")
        inputs = expand_inputs(inputs, logs_only=True)  # (what it reads: its bundles are
        # what it writes)
        jobs = _per_rank_jobs(inputs, share)
    elif args.output is None and len(inputs) == 1 and os.path.isdir(inputs[0]):
        # (beside a folder is in the folder above the run: a place the user never named)
        raise ProfileError(inputs[0], "a run's folder: give -o for one merged bundle, or "
                                      "--per-rank for one beside each rank's log in it")
    elif args.output is None and len(inputs) == 1:
        jobs = [(inputs, bundle_beside(inputs[0]))]
    elif args.output is None:
        raise ProfileError(inputs[0], "several inputs: give -o for one merged bundle, or "
                                      "--per-rank for one beside each rank's log")
    else:
        jobs = [(inputs, args.output)]
    if share is not None and not args.per_rank:
        if share[0] != 0:  # one bundle: the launcher's first process writes it, once
            return 0
    for _, out in jobs:
        check_output(out, inputs, {".lpbundle"}, "bundle")
    rc = 0
    by = f" [process {share[0]} of {share[1]}]" if share is not None else ""
    for files, out in jobs:
        model = load_with_progress(files, args, check_files=not args.per_rank)
        write_bundle(model, out)
        say(f"wrote {shown(out)} ({model.n_items} items){by}")
        rc = rc or (EXIT_USER_ERROR if model.errors else 0)
    if args.per_rank and not jobs:
        note("legate_prof: note: no rank's files for this process"
             + (f" (process {share[0]} of {share[1]})" if share else ""))
    return rc
