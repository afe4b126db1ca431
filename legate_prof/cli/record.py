"""``legate_prof record``: run ``legate --profile``, then write the report beside the logs."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from legate_prof.cli import report
from legate_prof.cli.common import EXIT_USER_ERROR, note
from legate_prof.errors import ProfileError


def register(sub):
    r = sub.add_parser("record", help="run 'legate --profile ARGS' (adds the CUDA stand-in "
                       "on machines without an NVIDIA driver), then write legate_prof/index.html "
                       "(legate_prof record --no-report ... to skip it)")
    r.add_argument("legate_args", nargs=argparse.REMAINDER,
                   help="legate's options, then the program and its arguments")
    r.set_defaults(func=run)


RECORD_USAGE = """usage: legate_prof record [--no-report] [legate options] prog.py [args]

Runs `legate --profile prog.py` (the NAME_*.prof logs go to --logdir, default here, and are
named by --profile-name, default legate: legate's own options), adds
`--gpus 0` where no NVIDIA driver exists (a stand-in answers "no device"), and writes
legate_prof/index.html, the HTML report, beside the logs (--no-report: not). A failed run or
no profiles written is one line and a non-zero exit status."""


def run(args):
    """Run ``legate --profile`` with the CUDA stand-in where no driver exists, then the report.

    Without a driver legate's auto-configuration fails looking for GPUs, so ``--gpus 0`` is
    added unless the user chose.  Legate claims "Profiles have been generated" even when the
    program failed; that line is held back and a failed run is summed up in one line.  The
    profiles are found where legate's own ``--logdir`` and ``--profile-name`` put them, and
    said; after a good run ``legate_prof/index.html`` is written beside them
    (``--no-report``: not).
    """
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
    extra, prog_at = _without_gpus_where_none(extra, prog_at, quiet=asks_help)
    logdir = _legate_option(extra[:prog_at], "--logdir") or "."
    if not asks_help and not os.path.isdir(logdir):
        try:  # (legate aborts with a stack trace where its --logdir does not exist)
            os.makedirs(logdir)
        except OSError as e:
            note(f"legate_prof: error: {logdir}: {e.strerror or e}")
            return EXIT_USER_ERROR
    name = _legate_option(extra[:prog_at], "--profile-name") or "legate"
    before = {p: os.path.getmtime(p) for p in _profiles_in(logdir, name)}
    rc, held = _run_legate(extra)
    if asks_help or rc is None:
        return EXIT_USER_ERROR if rc is None else rc
    written = [f for f in _profiles_in(logdir, name) if before.get(f) != os.path.getmtime(f)]
    if rc != 0:
        what = (f"partial profiles: {' '.join(written)}" if written
                else "no profiles were written")
        note(f"legate_prof: error: legate exited with status {rc}; {what}")
        return rc if 0 < rc < 128 else EXIT_USER_ERROR
    where = os.path.join(os.path.abspath(logdir), f"{name}_*.prof")
    if not written:  # (legate still says "Profiles have been generated")
        note(f"legate_prof: error: legate wrote no profiles ({where}); "
             f"{RECORD_USAGE.splitlines()[0]}")
        return EXIT_USER_ERROR
    # legate names the files legate_*.prof whatever --profile-name said
    sys.stdout.writelines(line.replace("/legate_*.prof", f"/{name}_*.prof") for line in held)
    note(f"legate_prof: {len(written)} profile file(s) in {where}")
    if no_report:
        return 0
    try:  # the guide: legate_prof/index.html beside the logs
        return report.run(argparse.Namespace(files=written, log=None, cache=False, pictures=True,
                                             output=os.path.join(logdir, "legate_prof")))
    except ProfileError as e:
        note(f"legate_prof: error: report: {e}")
        return EXIT_USER_ERROR


def _without_gpus_where_none(extra, prog_at, quiet=False):
    """``--gpus 0`` first, where no NVIDIA driver exists and the user did not choose."""
    from legate_prof.cuda_stub import real_driver_present
    if any(a == "--gpus" or a.startswith("--gpus=") for a in extra[:prog_at]) \
            or real_driver_present():
        return extra, prog_at
    if not quiet:
        note("legate_prof: no NVIDIA driver here: running with --gpus 0")
    return ["--gpus", "0"] + extra, prog_at + 2


def _legate_option(words, option):
    """The value of legate's ``option`` among ``words`` (``--x V`` or ``--x=V``), or None."""
    value = None
    for i, a in enumerate(words):
        if a == option and i + 1 < len(words):
            value = words[i + 1]
        elif a.startswith(option + "="):
            value = a.split("=", 1)[1]
    return value


def _run_legate(extra):
    """(legate's exit status, the "Profiles have been generated" lines held back); its
    other output goes through as it comes.  Status None: legate could not be started."""
    from legate_prof.cuda_stub import legate_env, legate_executable
    try:
        cmd = [legate_executable(), "--profile"] + extra
    except RuntimeError as e:
        note(f"legate_prof: error: {e}")
        return None, []
    held = []
    p = subprocess.Popen(cmd, env=legate_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace")
    for line in p.stdout:
        if line.startswith("Profiles have been generated"):
            held.append(line)
        else:
            sys.stdout.write(line)
            sys.stdout.flush()
    return p.wait(), held


def _profiles_in(d, name="legate"):
    """The logs (and the runtime's streams) legate writes as ``NAME_N.prof`` in ``d``."""
    import glob
    return sorted(glob.glob(os.path.join(glob.escape(d), f"{glob.escape(name)}_*.prof")))
