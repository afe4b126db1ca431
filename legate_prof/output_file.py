"""Where outputs go: never onto an input, never half-written.

Every command that writes a file (PNG, bundle, report, export) decides the format from the
extension first, refuses a path that is one of its inputs, checks the directory, and writes to a
temporary file in the target directory that is renamed over the target only when complete, so
a crash, a full disk or two writers at once never leave a mixed or truncated file.  A symbolic
link is followed only where it stays in its folder (its target, a sibling or a file below, is
replaced and the link stays): a link out of the folder — a received folder may hold one where a
default output goes (``convert --per-rank``, ``view``'s picture, ``report``'s folder) — is
refused, dangling or not (``leaving_link``).  A device, pipe or socket is written straight to,
since a rename would put a file in its place (``-o /dev/null``, ``-o /dev/stdout``).

Temporaries are named ``.TARGET.lp-HOST-PID-TOKEN.tmp`` and recorded, while they exist, in a
directory of this user's (``$TMPDIR/legate_prof_writing_UID``).  A process stopped by SIGKILL
leaves them (SIGTERM and SIGHUP end a command as Ctrl-C does: ``cli``); the next command of this user on this host removes
those whose process no longer runs (``sweep_stale_outputs``), and nothing else: not another
host's, not a live process's, not a file that only looks like one of ours.  A full disk (or a
quota, or a file size limit) is one line, and nothing written is left.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import tempfile
from pathlib import Path

from legate_prof.errors import ProfileError


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def leaving_link(path):
    """Where ``path`` leads when it is a symbolic link (or a chain of them) to a place outside
    the folder it is in — a file elsewhere, or nowhere yet (dangling) —, else None.  A link to
    a device or pipe (``/dev/stdout``) is not one: those are written where they are."""
    p = Path(os.fspath(path))
    try:
        if not p.is_symlink() or _descriptor(p):
            return None
    except OSError:  # (a name too long for the file system: said where it is written)
        return None
    with contextlib.suppress(OSError):
        if not stat.S_ISREG(os.stat(p).st_mode) and not stat.S_ISDIR(os.stat(p).st_mode):
            return None  # (a device, pipe or socket: written straight, see _written_straight)
    target = os.path.realpath(p)
    folder = os.path.realpath(p.parent if str(p.parent) else ".")
    try:
        inside = os.path.commonpath([target, folder]) == folder and target != folder
    except ValueError:  # (another drive)
        inside = False
    return None if inside else target


def refuse_long_name(path):
    """One line (``ProfileError``) where ``path``'s name is longer than its file system
    allows (a received log of a 252-character name made a 256-character bundle name: a
    traceback)."""
    p = Path(os.fspath(path))
    if _descriptor(p):
        return
    try:
        most = os.pathconf(p.parent if str(p.parent) else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        most = 255
    size = len(os.fsencode(p.name))
    if size > most:
        raise ProfileError(p, f"its name is {size} bytes, longer than the file system allows "
                              f"({most}); choose a shorter one")


def refuse_leaving_link(path, what="output"):
    """One line (``ProfileError``) where ``path`` is a link out of its folder, or a loop of
    links (it was replaced by the output, a review found)."""
    try:
        if os.path.islink(path):
            os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ProfileError(path, f"is a loop of symbolic links; the {what} is never "
                                     "written in its place: remove the links or choose "
                                     "another path") from None
    target = leaving_link(path)
    if target is not None:
        raise ProfileError(path, f"is a symbolic link out of its folder (to {target}); the "
                                 f"{what} is never written through it: remove the link or "
                                 "choose another path")


PROFILE_SUFFIXES = (".prof", ".prof.gz", ".lpbundle")  # what a run's folder is read for


def _inputs_and_their_files(inputs):
    """(path, the folder given that holds it, or None) of ``inputs``, and of each folder among
    them its profile files: its logs, streams and bundles, whichever a command reads (``export
    RUN -o RUN/legate_0.prof`` replaced a rank's log with the export)."""
    for i in inputs:
        yield i, None
        if i and os.path.isdir(i):
            with contextlib.suppress(OSError):
                for e in os.scandir(i):
                    if e.name.endswith(PROFILE_SUFFIXES):
                        yield e.path, i


def refuse_profile_name_in_run(path, inputs, what):
    """An output named as a profile (``legate_9.prof``) in a run folder being read: read as
    part of the run the next time (a report's folder so named made every later command of
    the run fail, a review found)."""
    p = Path(os.fspath(path))
    if p.name.endswith(PROFILE_SUFFIXES) and any(
            i and os.path.isdir(i) and _same_file(p.parent if str(p.parent) else Path("."), i)
            for i in inputs):
        raise ProfileError(p, f"is in the run's folder being read: a file named so there is "
                              f"read as part of the run the next time; put the {what} in another "
                              "folder")


def check_output(path, inputs=(), extensions=None, what="output", folder=False):
    """Validate an output path before anything is read; returns it as a Path.

    ``extensions``: allowed suffixes (lower case, with the dot); None allows any.  ``folder``:
    the output is a folder (``atomic_folder`` decides whether an existing one may go).
    """
    p = Path(os.fspath(path))
    refuse_long_name(p)
    for i, folder_given in _inputs_and_their_files(inputs):  # (first: a link to an input is
        if i and (os.path.exists(p) and _same_file(p, i)      # refused for that, said so)
                  or os.path.realpath(p) == os.path.realpath(i)):
            held = f" (a profile file of the run's folder {folder_given})" if folder_given else ""
            link = " through a symbolic link" if p.is_symlink() else ""
            raise ProfileError(p, f"is one of the inputs{link}{held}; the {what} must go to "
                                  "another path (inputs are never overwritten)")
    refuse_leaving_link(p, what)
    refuse_profile_name_in_run(p, inputs, what)
    if p.is_dir() and not folder:
        raise ProfileError(p, f"is a directory; give a file name for the {what}")
    if p.exists() and folder and not p.is_dir():
        raise ProfileError(p, f"exists and is not a folder; choose another path for the {what}")
    _written_straight(p)  # (a block device: refused now, before anything is read)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ProfileError(p, f"directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ProfileError(p, f"directory {str(parent)!r} is not writable")
    if extensions is not None and p.suffix.lower() not in extensions:
        raise ProfileError(p, f"unknown {what} format {p.suffix or '(no extension)'!r}; use "
                              + " or ".join(sorted(extensions)))
    return p


def _proc_umask():
    """The umask as Linux tells it (``/proc/self/status``), without setting it; None elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return None


def _import_umask():
    """Where the system does not tell it: set and put back, once, while this module is
    imported (before any thread of ours writes files: the umask is process-wide)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


_UMASK_AT_IMPORT = _proc_umask()
if _UMASK_AT_IMPORT is None:
    _UMASK_AT_IMPORT = _import_umask()


def _umask():
    found = _proc_umask()
    return _UMASK_AT_IMPORT if found is None else found


# names of a descriptor the process holds (``-o /dev/stdout``): written where they lead, the
# shell's pipe or file (the name's links end in /proc, or at a pipe that has no path)
_DESCRIPTOR = re.compile(r"^/(?:dev/(?:stdout|stderr|fd/\d+)|proc/(?:self|thread-self|\d+)/fd/\d+)$")


def standard_output_named(path):
    """``path``, or for ``-`` the name of this process's standard output (``/dev/stdout``)
    where the system has one: ``-o -`` wrote a file named "-"."""
    if os.fspath(path) == "-" and os.name == "posix" and os.path.exists("/dev/stdout"):
        return "/dev/stdout"
    return path


def is_standard_output(path):
    """True where ``path`` is the file this process's standard output goes to (``-o
    /dev/stdout``, a pipe, or the file the shell sent stdout to as well): a line printed
    there ("wrote ...") would land inside the output."""
    try:
        here, out = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (here.st_dev, here.st_ino) == (out.st_dev, out.st_ino)


def _descriptor(path):
    return os.name == "posix" and bool(_DESCRIPTOR.match(os.path.abspath(path)))


def _written_straight(path):
    """True for an existing device, pipe or socket, or a descriptor's name, which is written
    to where it is; a block device (a disk) is refused."""
    if _descriptor(path):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    if stat.S_ISBLK(mode):
        raise ProfileError(path, "is a block device; outputs go to files")
    if stat.S_ISFIFO(mode) and not _has_reader(path):  # (one planted at a default name hung)
        raise ProfileError(path, "is a named pipe that nothing reads; outputs go to files "
                                 "(or start its reader first)")
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


_READ_PIPES = []  # (descriptors of pipes found read: held open until the process ends)


def _has_reader(fifo):
    """Whether a named pipe has a reader now: written to, it would block until one came (a
    received folder's FIFO named as a default output hung ``view`` and ``convert``).  The
    descriptor that asked stays open: closed, the reader would read the end of its input
    before the output came."""
    try:
        fd = os.open(fifo, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        if e.errno == errno.ENXIO:  # (no reader)
            return False
        raise _cannot_write(fifo, e) from None
    _READ_PIPES.append(fd)
    return True


def _cannot_write(path, e):
    return ProfileError(path, f"could not write ({e.strerror or e})")


# errors that say the disk (or the user's share of it) is full, whatever file they name
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _is_full(e):
    return isinstance(e, OSError) and e.errno in _FULL


def disk_full(e):
    """True for an error that says the disk (or the user's share of it) is full."""
    return _is_full(e)


# -- temporaries that say whose they are ---------------------------------------------------------
_TEMPORARY = re.compile(r"^\.(?P<target>.+)\.lp-(?P<host>[A-Za-z0-9-]+)-(?P<pid>\d+)-"
                        r"[0-9a-f]+\.(?:tmp|old)(?:\.[A-Za-z0-9]{1,16})?$")  # (.tmp.wal too)


def _host():
    """This host's name as it may stand in a file name between dashes."""
    import socket
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"


def temporary_directory():
    """The temporary folder (``tempfile.gettempdir``) — or, where no candidate takes a file
    (a full disk under /tmp: Python raised FileNotFoundError, a traceback before a command
    began), the one named first: what is written there then fails as on a full disk, and
    says so in one line."""
    try:
        return tempfile.gettempdir()
    except OSError:
        return os.environ.get("TMPDIR") or "/tmp"


def _registry():
    """This user's directory of temporaries being written (None where it cannot be trusted:
    someone else's, a link, or open to others)."""
    if os.name != "posix":
        return None
    d = Path(temporary_directory()) / f"legate_prof_writing_{os.getuid()}"
    with contextlib.suppress(FileExistsError, OSError):
        d.mkdir(mode=0o700)
    try:
        st = os.lstat(d)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return d


def _new_temporary(target, kind, make):
    """Record, then make (``make(path)``) a temporary beside ``target``; returns (path, the
    record or None)."""
    parent = target.parent if str(target.parent) else Path(".")
    reg = _registry()
    for _ in range(100):
        token = secrets.token_hex(4)
        tmp = parent / f".{_short(target.name)}.lp-{_host()}-{os.getpid()}-{token}.{kind}"
        entry = reg / f"{_host()}-{os.getpid()}-{token}" if reg is not None else None
        if entry is not None:
            with contextlib.suppress(OSError):
                os.symlink(os.path.abspath(tmp), entry)
        try:
            make(str(tmp))
            return str(tmp), entry
        except FileExistsError:
            _forget(entry)
        except BaseException:
            _forget(entry)
            raise
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target))


def _short(name, most=120):
    """``name`` as a temporary's name holds it: a long one cut, with a hash of the whole (a
    240-character name is legal; its temporary, 66 characters longer, was not)."""
    raw = os.fsencode(name)
    if len(raw) <= most:
        return name
    import hashlib
    return os.fsdecode(raw[:most - 13]) + "~" + hashlib.sha1(raw).hexdigest()[:12]


def _forget(entry):
    if entry is not None:
        with contextlib.suppress(OSError):
            os.unlink(entry)


def _make_file(path):
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # (another user's process now has that id: leave it)
    return True


def _stale(path, host):
    """True for a temporary of ours (by its name, owner and host) whose process has ended."""
    m = _TEMPORARY.match(os.path.basename(path))
    if m is None or m["host"] != host or int(m["pid"]) == os.getpid():
        return False
    try:
        if os.lstat(path).st_uid != os.getuid():
            return False
    except OSError:
        return False
    return not _alive(int(m["pid"]))


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _note(msg):
    print(msg, file=sys.stderr)


def sweep_stale_outputs(directory=None, note=_note):
    """Remove the temporaries that processes of this user on this host were writing when
    they were stopped (those recorded, and those in ``directory``, with what a library
    wrote beside them: a database's ``.wal``); returns their paths.  Only on POSIX
    (elsewhere, signal 0 is not a question)."""
    if os.name != "posix":
        return []
    host, removed = _host(), []
    folders = set() if directory is None else {os.fspath(directory)}
    reg = _registry()
    entries = []
    with contextlib.suppress(OSError):
        entries = list(os.scandir(reg)) if reg is not None else []
    for e in entries:
        parts = e.name.rsplit("-", 2)
        if len(parts) != 3 or parts[0] != host or not parts[1].isdigit() \
                or _alive(int(parts[1])):
            continue
        with contextlib.suppress(OSError):
            tmp = os.readlink(e.path)
            m = _TEMPORARY.match(os.path.basename(tmp))
            if m and m["pid"] == parts[1] and _stale(tmp, host):
                removed.append(tmp)
                _remove(tmp)
                folders.add(os.path.dirname(tmp))
        _forget(e.path)
    for folder in folders:
        with contextlib.suppress(OSError):
            for e in os.scandir(folder):
                if e.name.startswith(".") and ".lp-" in e.name and _stale(e.path, host):
                    removed.append(e.path)
                    _remove(e.path)
    for tmp in removed:
        note(f"legate_prof: note: removed {tmp}, left by a legate_prof that was stopped "
             "while writing it")
    return removed


def remove_own_temporaries():
    """Remove the temporaries this process is writing, and their records: a process about
    to end at once (``os._exit``: the viewer closed while its threads write) leaves no part
    of an output behind.  Returns their paths."""
    reg = _registry()
    if reg is None:
        return []
    mine, removed = f"{_host()}-{os.getpid()}-", []
    with contextlib.suppress(OSError):
        for e in os.scandir(reg):
            if not e.name.startswith(mine):
                continue
            with contextlib.suppress(OSError):
                tmp = os.readlink(e.path)
                m = _TEMPORARY.match(os.path.basename(tmp))
                if m and int(m["pid"]) == os.getpid() and m["host"] == _host():
                    _remove(tmp)
                    removed.append(tmp)
            _forget(e.path)
    return removed


def end_now(code):
    """End the process now, whatever its threads are doing (a thread stopped at interpreter
    exit inside C++ aborts the process; one waited for may never end): after the atexit
    handlers (the terminal progress gives the cursor back, rank workers are killed, a cache
    entry being written is stopped), with no temporary of this process left behind, and what
    its streams hold written out."""
    import atexit
    atexit._run_exitfuncs()
    remove_own_temporaries()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


# -- writing ------------------------------------------------------------------------------------
def _failed(path, e, tmp):
    """The one-line error for an OSError while writing, or None when it is not ours to word
    (an input's error names that input)."""
    name = getattr(e, "filename", None)
    if _is_full(e) or name is None or str(name).startswith(str(tmp)) or str(name) == str(path):
        return _cannot_write(path, e)
    return None


def streams_to_nowhere():
    """This process's standard streams go nowhere from now on, its descriptors and Python's
    objects alike (in a forked copy: a lock another thread held at the fork, on the old
    objects, stays held there)."""
    nowhere = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(nowhere, fd)
    sys.stdout = sys.stderr = open(nowhere, "w", closefd=False)  # noqa: SIM115


def fork_is_safe():
    """A fork here copies no lock that a running thread holds and the copy needs: only the
    main thread forks, Qt not imported (its threads are not Python's), and every other
    thread a daemon (the progress display's), which the copy never calls into."""
    import threading
    if not hasattr(os, "fork") or threading.current_thread() is not threading.main_thread():
        return False
    return not _qt_imported() and all(t.daemon for t in threading.enumerate()
                                      if t is not threading.main_thread())


def _qt_imported():
    """Qt's core module imported, asked of ``sys.modules`` alone: an attribute of a PySide6
    module asked for while another thread imports Qt waits, holding the interpreter's lock,
    on a lock that thread holds (``view``'s early load hung so, one start in twenty)."""
    return "PySide6.QtCore" in sys.modules


def written_in_a_copy(work, quiet=False):
    """The process id of a forked copy of this process that runs ``work()`` (outputs written
    while this process goes on: the report's pictures, a cache entry) and exits, 0 when it
    returned, 1 when it raised; None where no copy could be made.  The copy never returns
    into its caller's frames: nothing of the caller's unwinds there, no exit handler runs.
    ``quiet``: its standard streams go nowhere and it gives way to other processes (a copy
    that outlives the command).  The caller takes a copy only where that is safe: no other
    thread (whose locks a fork would copy), no Qt started."""
    if not hasattr(os, "fork"):
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid:
        return pid
    code = 1
    try:
        if quiet:
            streams_to_nowhere()
            if hasattr(os, "nice"):
                os.nice(10)  # (the user's next command comes first)
        work()
        code = 0
    finally:
        os._exit(code)


def copy_ended(pid, kill=False):
    """Wait for the copy ``pid`` that ``written_in_a_copy`` made (``kill``: stopped first,
    its work no longer wanted): its exit code, or -1 when a signal ended it or it was
    waited for already."""
    if kill:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return -1
        except InterruptedError:
            continue
        return os.waitstatus_to_exitcode(status)


@contextlib.contextmanager
def atomic_output(path, mode=0o666, stream=True):
    """Yield a temporary path beside ``path`` (beside a link's target); rename it to the
    target if the block succeeds.  A device or pipe is yielded as it is (see above), or
    refused when not ``stream`` (a database file, which is written in place)."""
    path = Path(os.fspath(path))
    refuse_long_name(path)
    refuse_leaving_link(path, "output")
    target = Path(os.path.realpath(path)) if path.is_symlink() and not _descriptor(path) \
        else path
    if _written_straight(target):
        if not stream:
            raise ProfileError(path, "is not a regular file (a device or pipe); this output "
                                     "goes to a file")
        try:
            yield str(target)
        except OSError as e:
            if _is_full(e):
                raise _cannot_write(path, e) from None
            raise
        return
    sweep_stale_outputs(target.parent if str(target.parent) else ".")
    try:
        tmp, entry = _new_temporary(target, "tmp", _make_file)
    except OSError as e:
        raise _cannot_write(path, e) from None
    try:
        yield tmp
        os.chmod(tmp, mode & ~_umask())  # made 0600; outputs are ordinary files
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and _failed(target, e, tmp) is not None:
            raise _cannot_write(path, e) from None
        raise
    finally:
        _forget(entry)


@contextlib.contextmanager
def atomic_folder(path, replaceable, what, note=_note):
    """Yield a temporary folder beside ``path``; when the block succeeds, it takes the place
    of ``path``.  An existing non-empty folder is replaced only when ``replaceable(folder)``
    says it is an earlier output of ours (never a user's folder named by mistake, nor one
    where the user put files of their own: a string says which), and ``note`` says so."""
    out = Path(os.path.abspath(os.fspath(path)))
    refuse_leaving_link(out, what)
    if out.exists() and not out.is_dir():
        raise ProfileError(str(out), "exists and is not a folder; choose another -o")
    replacing = out.is_dir() and any(out.iterdir())
    if replacing:
        verdict = replaceable(out)
        if isinstance(verdict, str) or not verdict:
            raise ProfileError(str(out), f"exists and is not a {what}; choose another -o"
                               if not verdict else f"holds what a {what} does not ({verdict});"
                               " nothing was changed: choose another -o, or move them")
    sweep_stale_outputs(out.parent)
    try:
        tmp, entry = _new_temporary(out, "tmp", lambda p: os.mkdir(p, 0o700))
    except OSError as e:
        raise _cannot_write(str(out), e) from None
    tmp = Path(tmp)
    try:
        yield tmp
        umask = _umask()  # made 0700 (files in it as their writers made them)
        for p in [tmp, *tmp.rglob("*")]:
            os.chmod(p, (0o777 if p.is_dir() else 0o666) & ~umask)
        _put_in_place(tmp, out)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError) and _failed(out, e, tmp) is not None:
            raise _cannot_write(str(out), e) from None
        raise
    finally:
        _forget(entry)
    if replacing:
        note(f"legate_prof: note: {out}: replaced the {what} written there before")


@contextlib.contextmanager
def scratch_folder(name):
    """A folder of this process's in the temporary directory for files nobody keeps (``sql``'s
    tables of a profile held per rank, DuckDB's spill), named and recorded as the outputs'
    temporaries are (``.NAME.lp-HOST-PID-TOKEN.tmp``, mode 0700): removed when the block
    ends, and by the next command when a signal (SIGKILL) stopped this one first."""
    parent = Path(temporary_directory())
    try:
        tmp, entry = _new_temporary(parent / name, "tmp", lambda p: os.mkdir(p, 0o700))
    except OSError as e:
        raise ProfileError(str(parent), f"could not make a folder for temporary files "
                                        f"({e.strerror or e}); TMPDIR chooses where") from None
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        _forget(entry)


def _put_in_place(tmp, out):
    """Rename the finished folder ``tmp`` to ``out``; an ``out`` already there is moved aside
    first (into a temporary of its own, removed after)."""
    if not out.exists():
        os.replace(tmp, out)
        return
    old, entry = _new_temporary(out, "old", lambda p: os.mkdir(p, 0o700))
    try:
        os.replace(out, Path(old) / "r")
        try:
            os.replace(tmp, out)
        except BaseException:
            os.replace(Path(old) / "r", out)  # the earlier one back where it was
            raise
    finally:
        shutil.rmtree(old, ignore_errors=True)
        _forget(entry)
