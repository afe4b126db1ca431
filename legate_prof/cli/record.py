"""``legate_prof record``: run ``legate --profile``, then write the report beside the logs."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from legate_prof.cli import report
from legate_prof.cli.common import EXIT_USER_ERROR
from legate_prof.errors import ProfileError


def register(sub):
    r = sub.add_parser("record", help="run 'legate --profile ARGS' (adds the CUDA stand-in "
                       "on machines without an NVIDIA driver), then write legate_prof/index.html "
                       "(legate_prof record --no-report ... to skip it)")
    r.add_argument("legate_args", nargs=argparse.REMAINDER)
    r.set_defaults(func=run)


RECORD_USAGE = """usage: legate_prof record [--no-report] [legate options] prog.py [args]

Runs `legate --profile prog.py` (the legate_*.prof logs go to --logdir, default here), adds
`--gpus 0` where no NVIDIA driver exists (a stand-in answers "no device"), and writes
legate_prof/index.html, the HTML report, beside the logs (--no-report: not). A failed run or
no profiles written is one line and a non-zero exit status."""


def run(args):
    """Run ``legate --profile`` with the CUDA stand-in where no driver exists, then the report.

    Without a driver legate's auto-configuration fails looking for GPUs, so ``--gpus 0`` is
    added unless the user chose.  Legate claims "Profiles have been generated" even when the
    program failed; that line is held back and a failed run is summed up in one line.  After a
    good run ``legate_prof/index.html`` is written beside the logs (``--no-report``: not).
    """
    from legate_prof.cuda_stub import legate_env, legate_executable, real_driver_present
    extra = list(args.legate_args)
    asks_help = extra[:1] in (["-h"], ["--help"])
    if asks_help:
        print(RECORD_USAGE)
        print("legate's own options follow.\n", flush=True)
    prog_at = next((i for i, a in enumerate(extra) if a.endswith(".py")), len(extra))
    no_report = "--no-report" in extra[:prog_at]
    if no_report:
        extra.remove("--no-report")
        prog_at -= 1
    if not any(a == "--gpus" or a.startswith("--gpus=") for a in extra[:prog_at]) \
            and not real_driver_present():
        extra = ["--gpus", "0"] + extra
        prog_at += 2
        print("legate_prof: no NVIDIA driver here: running with --gpus 0", file=sys.stderr)
    try:
        cmd = [legate_executable()] + ["--profile"] + extra
    except RuntimeError as e:
        print(f"legate_prof: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    logdir = "."
    for i, a in enumerate(extra[:prog_at]):
        if a == "--logdir" and i + 1 < prog_at:
            logdir = extra[i + 1]
        elif a.startswith("--logdir="):
            logdir = a.split("=", 1)[1]
    before = {p: os.path.getmtime(p) for p in _profiles_in(logdir)}
    held = []
    p = subprocess.Popen(cmd, env=legate_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace")
    for line in p.stdout:
        if line.startswith("Profiles have been generated"):
            held.append(line)
        else:
            sys.stdout.write(line)
            sys.stdout.flush()
    rc = p.wait()
    if asks_help:
        return rc
    written = [f for f in _profiles_in(logdir) if before.get(f) != os.path.getmtime(f)]
    if rc != 0:
        what = (f"partial profiles: {' '.join(written)}" if written
                else "no profiles were written")
        print(f"legate_prof: error: legate exited with status {rc}; {what}", file=sys.stderr)
        return rc if 0 < rc < 128 else EXIT_USER_ERROR
    if not written:  # (legate still says "Profiles have been generated")
        print(f"legate_prof: error: legate wrote no profiles in {os.path.abspath(logdir)}; "
              f"{RECORD_USAGE.splitlines()[0]}", file=sys.stderr)
        return EXIT_USER_ERROR
    sys.stdout.writelines(held)
    if not no_report:  # the guide: legate_prof/index.html beside the logs
        try:
            return report.run(argparse.Namespace(files=written, log=None, cache=False,
                                                 pictures=True,
                                                 output=os.path.join(logdir, "legate_prof")))
        except ProfileError as e:
            print(f"legate_prof: error: report: {e}", file=sys.stderr)
            return EXIT_USER_ERROR
    return 0


def _profiles_in(d):
    import glob
    return sorted(glob.glob(os.path.join(d, "legate_*.prof")))
