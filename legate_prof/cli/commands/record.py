"""``legate_prof record``: run ``legate --profile``, then write the report beside the logs."""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import os
import subprocess
import sys

from legate_prof.cli.commands import report
from legate_prof.cli.common import EXIT_USER_ERROR, note
from legate_prof.errors import ProfileError


def register(sub):
    r = sub.add_parser("record", help="run 'legate --profile ARGS' (adds the CUDA stand-in "
                       "on machines without an NVIDIA driver), then write legate_prof/index.html "
                       "(legate_prof record --no-report ... to skip it)")
    r.add_argument("legate_args", nargs=argparse.REMAINDER,
                   help="legate's options, then the program and its arguments")
    r.set_defaults(func=run)


RECORD_USAGE = """usage: legate_prof record [--no-report] [-o DIR] [legate options] prog.py [args]

Runs `legate --profile prog.py` (the NAME_*.prof logs go to --logdir or -o, default here, and are
named by --profile-name, default legate: legate's own options), adds
`--gpus 0` where no NVIDIA driver exists (a stand-in answers "no device"), and writes
legate_prof/index.html, the HTML report, beside the logs (--no-report: not). A failed run or
no profiles written is one line and a non-zero exit status."""


def run(args):
    """Run ``legate --profile`` with the CUDA stand-in where no driver exists, then the report.

    Without a driver legate's auto-configuration fails looking for GPUs, so ``--gpus 0`` is
    added unless the user chose.  Legate claims "Profiles have been generated" even when the
    program failed; that message is held back and a failed run is summed up in one line.  No
    program (legate would start its interactive prompt, which looked hung) is one line, legate
    not started.  The profiles are found where legate's own ``--logdir`` and
    ``--profile-name`` put them, and said; after a good run ``legate_prof/index.html`` is
    written beside them (``--no-report``: not).
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
    if not asks_help and _starts_a_prompt(extra):
        note("legate_prof: error: no program to run (legate would start its interactive "
             f"Python prompt); {RECORD_USAGE.splitlines()[0]}")
        return EXIT_USER_ERROR
    extra = _output_as_logdir(extra, prog_at)
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
    try:
        rc, held, said = _run_legate(extra, " ".join(extra[prog_at:prog_at + 1])
                                     or "the program", stand_in=not asks_help)
    except _Stopped as stop:
        note(f"legate_prof: stopped (Ctrl-C); legate {stop.how}; "
             + _partial_words(_written(logdir, name, before), logdir))
        return 130
    if asks_help or rc is None:
        return EXIT_USER_ERROR if rc is None else rc
    return _after_run(rc, held, logdir, name, _written(logdir, name, before), no_report, said)


def _output_as_logdir(extra, prog_at):
    """``-o DIR`` / ``--output DIR`` (``--output=DIR``) before the program: legate's
    ``--logdir DIR``, where the profiles and the report go (the other commands' ``-o``;
    legate has none, and said "unrecognized arguments: -o" after a hundred lines of its
    usage: a review)."""
    out = []
    module = next((k for k, a in enumerate(extra[:prog_at])
                   if a in ("-m", "--module") or a.startswith("--module=")), None)
    if module is not None:  # (a module's own arguments follow its name)
        prog_at = module
    for k, a in enumerate(extra):
        if k < prog_at and a in ("-o", "--output"):
            out.append("--logdir")
        elif k < prog_at and a.startswith("--output="):
            out.append("--logdir=" + a[len("--output="):])
        else:
            out.append(a)
    return out


TRACEBACK = "Traceback (most recent call last)"  # what Python prints of an exception


def _after_run(rc, held, logdir, name, written, no_report, said=()):
    """What a finished run comes to: a failed run or no profiles in one line (a failed run's
    partial profiles with legate's output ``said`` in a report beside them: an out-of-memory
    report names what held the memory); else legate's closing message (held back: it says
    "Profiles have been generated" even then), where the profiles are, and the report
    beside them."""
    if rc != 0:
        raised = 0 < rc < 128 and any(line.startswith(TRACEBACK) for line in said)
        what = ("no profiles were written" if not written else
                # (a Python exception ends the program, and legate shuts down as ever: the
                # profiles are whole — "partial profiles" and "no out-of-memory report in
                # it" said of them, a review)
                f"the program raised an exception (its traceback above); its profiles: "
                f"{' '.join(written)}" if raised else
                f"partial profiles: {' '.join(written)}")
        if written and said and not no_report:
            what += _failed_run_report(written, said, logdir, name)
        note(f"legate_prof: error: legate exited with status {rc}; {what}")
        return rc if 0 < rc < 128 else EXIT_USER_ERROR
    where = os.path.join(os.path.abspath(logdir), f"{name}_*.prof")
    if not written:  # (legate still says "Profiles have been generated")
        # (the usage line read as a typing mistake, of a program that never started the
        # runtime: a review)
        note(f"legate_prof: error: legate wrote no profiles ({where}): did the program "
             "start Legate's runtime? (it profiles the runtime, which a program starts by "
             "importing legate or legate_prof.runtime and using it)")
        return EXIT_USER_ERROR
    if held:  # one line, however a narrow console wrapped it (the wraps keep their spaces);
        # legate names the files legate_*.prof whatever --profile-name said
        message = "".join(line.rstrip("\n") for line in held)
        sys.stdout.write(message.replace("/legate_*.prof", f"/{name}_*.prof") + "\n")
    note(f"legate_prof: {_written_words(written)} in {where}")
    if no_report:
        return 0
    try:  # the guide: legate_prof/index.html beside the logs
        return report.run(argparse.Namespace(files=written, log=None, cache=False, pictures=True,
                                             output=os.path.join(logdir, "legate_prof")))
    except ProfileError as e:
        note(f"legate_prof: error: report: {e}")
        return EXIT_USER_ERROR


def _failed_run_report(written, said, logdir, name):
    """A failed run's console output kept beside its profiles (``NAME_console.log``, for
    ``--log`` where it tells why the run stopped), and their report (with it where it does:
    an out-of-memory report, a signal caught): "; ...: FOLDER/index.html", or why there is
    none (the guide: a run leaves legate_prof/; an out-of-memory run left nothing, and its
    out-of-memory report, which names what held the memory, only on the terminal: a review;
    a run stopped by Ctrl+C was "out of memory? give legate's console output": another)."""
    from legate_prof.output_file import atomic_output
    from legate_prof.read.console_log import parse_oom_reports, parse_signals
    log, out = os.path.join(logdir, f"{name}_console.log"), os.path.join(logdir, "legate_prof")
    text = "".join(said)
    oom = bool(parse_oom_reports(text))
    tells = oom or bool(parse_signals(text))
    try:
        with atomic_output(log) as tmp, open(tmp, "w", encoding="utf-8", errors="replace") as f:
            f.writelines(said)
        with contextlib.redirect_stdout(io.StringIO()):  # (its "wrote ...": said below)
            report.run(argparse.Namespace(files=written, log=log if tells else None,
                                          cache=False, pictures=True, output=out))
    except (ProfileError, OSError) as e:
        return f"; no report of them ({e})"
    if not oom:
        return (f"; legate's output kept as {log}; their report{' with it' if tells else ''}: "
                f"{os.path.join(out, 'index.html')}")
    return (f"; legate's output kept as {log} (give it with --log: an out-of-memory report there "
            f"names what held the memory); their report with it: {os.path.join(out, 'index.html')}")


def _starts_a_prompt(words):
    """True where legate, given ``words``, would start its interactive Python prompt: no
    program, no ``-m``/``--module``, not ``--run-mode exec`` nor ``--dry-run``.  Read by
    legate's own parser (which words are its options' values, which the program: a script
    not ending in .py runs too), so nothing legate would run is refused; where the words
    cannot be read so, legate decides (and says what is wrong itself)."""
    import io
    try:
        from legate.driver.args import parser
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            seen = parser.parse_args(words)
    except (Exception, SystemExit):  # (legate's launcher elsewhere; words it will name)
        return False
    return (not getattr(seen, "command", None) and getattr(seen, "module", None) is None
            and getattr(seen, "run_mode", None) in (None, "python")
            and not getattr(seen, "dry_run", False))


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


def _written(logdir, name, before):
    """The profiles legate wrote (new, or changed since ``before``: {path: mtime})."""
    return [f for f in _profiles_in(logdir, name) if before.get(f) != os.path.getmtime(f)]


def _written_words(written):
    """'1 rank's log and its runtime stream', '4 ranks' logs': a rank's runtime stream
    (``NAME_N.runtime.prof``) is not a rank of its own (a review read "2 profile file(s)"
    after a one-rank run)."""
    streams = sum(f.endswith(".runtime.prof") for f in written)
    logs = len(written) - streams
    words = f"{logs:,} rank's log" if logs == 1 else f"{logs:,} ranks' logs"
    if streams:
        words += (" and its runtime stream" if logs == streams == 1 else
                  " and their runtime streams" if logs == streams else
                  f" and {streams:,} runtime stream{'s' * (streams != 1)}")
    return words


def _partial_words(written, logdir):
    return (f"partial profiles: {' '.join(written)} (what they hold can be read: "
            f"`legate_prof view {logdir}`)" if written else "no profiles were written")


# legate printing nothing for this long (then twice as long, and so on) is said: a program
# that hangs makes `legate --profile` silent for ever (LEGATE_PROF_RECORD_QUIET_S sets it)
QUIET_NOTE_S = 60.0
STOP_GRACE_S = 10.0  # after Ctrl-C: how long legate is given to end (it got the Ctrl-C too)
KILL_GRACE_S = 5.0  # then after SIGTERM, and after SIGKILL


class _Stopped(Exception):
    """Ctrl-C while legate ran; ``how`` says how legate ended."""

    def __init__(self, how):
        super().__init__(how)
        self.how = how


def _pump(stream, lines):
    for line in stream:
        lines.put(line)
    lines.put(None)


def _quiet_s():
    try:
        return max(float(os.environ.get("LEGATE_PROF_RECORD_QUIET_S", QUIET_NOTE_S)), 0.1)
    except ValueError:
        return QUIET_NOTE_S


def _run_legate(extra, program="the program", stand_in=True):
    """(legate's exit status, its closing "Profiles have been generated" message held
    back); its other output goes through as it comes, and a silence is said
    (``QUIET_NOTE_S``).  Status None: legate could not be started (said in one line: no
    launcher, or a CUDA stand-in ``stand_in`` asked for that could not be built).  Ctrl-C:
    legate is let end (``_Stopped``)."""
    import queue
    import threading
    import time
    from legate_prof.cuda_stub import legate_env, legate_executable
    try:
        cmd = [legate_executable(), "--profile"] + extra
        env = legate_env(stand_in=stand_in)
    except RuntimeError as e:
        note(f"legate_prof: error: {e}")
        return None, [], []
    held, lines, said = [], queue.Queue(), _Said()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace")
    threading.Thread(target=_pump, args=(p.stdout, lines), daemon=True).start()
    started = last = time.monotonic()
    quiet = wait = _quiet_s()
    try:
        while True:
            try:
                line = lines.get(timeout=max(last + wait - time.monotonic(), 0.05))
            except queue.Empty:
                now = time.monotonic()
                if now - last >= wait:
                    note(f"legate_prof: note: waiting for legate (pid {p.pid}, running "
                         f"{program}): nothing printed for {now - last:.0f} s, "
                         f"{now - started:.0f} s since it started; a program that hangs "
                         "keeps it waiting (Ctrl-C stops it; the profiles written so far are "
                         "kept)")
                    wait *= 2
                continue
            if line is None:
                break
            last, wait = time.monotonic(), quiet
            _pass_on(line, held)
            said.add(line)
        return p.wait(), held, said.lines
    except KeyboardInterrupt:
        raise _Stopped(_let_end(p)) from None


class _Said:
    """The last ``SAID_KEPT`` characters of what legate printed, by line (its out-of-memory
    report comes last; a program printing for hours keeps no more)."""

    def __init__(self):
        self.lines, self.size = collections.deque(), 0

    def add(self, line):
        self.lines.append(line)
        self.size += len(line)
        while self.size > SAID_KEPT and len(self.lines) > 1:
            self.size -= len(self.lines.popleft())


SAID_KEPT = 16 << 20


CLOSING = "Profiles have been generated"  # legate's closing message begins so ...
CLOSING_END = "to view them"  # ... and ends so


def _pass_on(line, held):
    """A line of legate's to stdout as it comes, except its closing message, into ``held``:
    from its first line to the one that ends it (legate's rich console may wrap it: a
    review saw its "view them" leak, printed before the rest)."""
    if line.startswith(CLOSING) or (
            held and not "".join(held).replace("\n", "").rstrip().endswith(CLOSING_END)):
        held.append(line)
        return
    sys.stdout.write(line)
    sys.stdout.flush()


def _let_end(p):
    """After Ctrl-C: wait for legate (a terminal's Ctrl-C reached it too; a signal to us
    alone is passed on), then stop it; how it ended, in words.  The last resort kills the
    program legate runs too: legate's driver starts it in a session of its own and passes
    on only INT, TERM, QUIT and HUP, so a SIGKILL to the launcher alone left it running."""
    import signal
    try:
        p.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGINT)
    try:
        return f"ended (status {p.wait(timeout=STOP_GRACE_S)})"
    except subprocess.TimeoutExpired:
        late = f"did not end in {STOP_GRACE_S:g} s and was"
    p.terminate()
    try:
        p.wait(timeout=KILL_GRACE_S)
        return f"{late} terminated"
    except subprocess.TimeoutExpired:
        programs = _children(p.pid)  # (read while they are still legate's)
    killed = _kill_with_their_groups(programs)
    p.kill()
    try:
        p.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        return "could not be stopped"
    if killed:
        return f"{late} killed, with the program it ran (pid {', '.join(map(str, killed))})"
    return f"{late} killed (the program it ran, in a session of its own, may still run)"


def _children(pid):
    """The processes ``pid`` started, read from /proc (none where there is no /proc)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(os.path.join(entry.path, "stat"), "rb") as f:
                    after_name = f.read().rsplit(b")", 1)[1].split()  # (state, ppid, ...)
            except (OSError, IndexError):
                continue  # (ended meanwhile)
            if len(after_name) > 1 and after_name[1] == str(pid).encode():
                found.append(int(entry.name))
    return found


def _kill_with_their_groups(pids):
    """SIGKILL to each of ``pids`` and, where it leads a process group of its own (legate's
    program: what it started in turn is there too), to that group; those reached."""
    import signal
    reached = []
    for pid in pids:
        try:
            if os.getpgid(pid) == pid != os.getpgid(0):
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except OSError:  # (ended meanwhile)
            continue
        reached.append(pid)
    return reached


def _profiles_in(d, name="legate"):
    """The logs (and the runtime's streams) legate writes as ``NAME_N.prof`` in ``d``."""
    import glob
    return sorted(glob.glob(os.path.join(glob.escape(d), f"{glob.escape(name)}_*.prof")))
