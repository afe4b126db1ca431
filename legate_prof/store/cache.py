"""The cache of built timelines that makes ``view`` of the same raw logs open at once.

Entries are bundles (``bundle.py``) in the user's cache directory (``$LEGATE_PROF_CACHE_DIR``,
else the platform's: ``$XDG_CACHE_HOME/legate_prof`` or ``~/.cache/legate_prof`` on Linux,
``~/Library/Caches/legate_prof`` on macOS, ``%LOCALAPPDATA%\\legate_prof`` on Windows); never in
the user's data directory.  An entry's key covers each input's path, size, mtime, ctime, inode
and a hash of sampled blocks across it (the CRC-32 of its first and last 4 KiB and of SAMPLES
blocks between: files up to a few MiB hashed whole), so a file replaced or changed in place
never gets old data (any write changes the ctime, which no one but root can set back; an edit
that kept even that would still have to miss every sampled block); the bundle format version
and the source of the code that makes an entry (``code_digest``) are in the key, and every
entry is validated when read (damage -> rebuilt, with a note):
fully — every value of every column — unless its stamp (``KEY.checked``: size, mtime, ctime,
inode, written when we wrote or fully checked it) still matches, in which case only what does
not grow with the items is checked: any write to the entry changes its ctime, so this spares
the 0.5 s of paging in a 10 M-item entry, not a check of a changed one.
Total size is bounded (``$LEGATE_PROF_CACHE_MAX_MB``, default 2048) by evicting the least
recently used entries.  Only regular files are opened, as entries, stamps or inputs: a FIFO
planted where an entry should be is removed with a note, never read (it would block).

The folder is trusted as the temporaries' folder is (``output_file``): made 0700, used only
while it is this user's and no one else can write in it (one owned by another user and open
to all served a planted entry under the victim's key); entries and stamps are the owner's
only (0600: a 0600 profile was cached 0644).  What it reads, rewrites and evicts are its own
entries alone: a regular file of this user's with a name the cache gives (32 hex digits) and,
for an entry, a bundle's first bytes — never another ``*.lpbundle`` or ``*.checked`` someone
put there.
"""

from __future__ import annotations

import array
import contextlib
import errno
import hashlib
import os
import re
import stat
import sys
import time
import zlib
from pathlib import Path

from legate_prof.errors import ProfileError

ENTRY_SUFFIX = ".lpbundle"
STAMP_SUFFIX = ".checked"
STALE_TMP_S = 3600  # an entry being written for this long was left by a killed process
DEFAULT_MAX_MB = 2048
# an entry's last use is recorded (its mtime, and so its stamp, rewritten) when older than
# this: every cached open rewrote the stamp through a temporary, seven file operations in the
# cache folder before the first frame; eviction needs no finer order than this
USED_RESOLUTION_S = 600


def cache_dir():
    """Where entries go, or None when caching is turned off (LEGATE_PROF_CACHE_DIR='')."""
    env = os.environ.get("LEGATE_PROF_CACHE_DIR")
    if env is not None:
        return Path(env) if env else None
    return user_cache_home()


def user_cache_home():
    """This tool's folder in the platform's cache folder (``cuda_stub`` builds there too)."""
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        # (a relative one is ignored, as the XDG spec says: it put the cache in the folder
        # the command ran in, a received run's)
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "legate_prof"


def _max_bytes():
    try:
        return max(int(float(os.environ.get("LEGATE_PROF_CACHE_MAX_MB", DEFAULT_MAX_MB))), 0) << 20
    except ValueError:
        return DEFAULT_MAX_MB << 20


SAMPLE_BYTES = 1 << 12  # (64 KiB blocks were 30 ms of CPU before a cached first frame of ten
#                         126 MB logs, a sixth of it: docs/performance.md, "Frames, third pass")
SAMPLES = 64  # blocks hashed across each input besides its first and last (docs/performance.md)
WHOLE_BYTES = (SAMPLES + 2) << 16  # an input up to this size is hashed whole


def open_regular(path, follow=True):
    """(file, stat) of a regular file, opened without blocking on anything else (a FIFO, a
    device); OSError otherwise.  ``follow=False``: a symbolic link is refused too."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return os.fdopen(fd, "rb"), st


def _sample(f, size, h):
    """Hash the whole file when small, else its first and last block and SAMPLES between,
    each block by its CRC-32 (zlib's: a third of sha256's time over the 66 blocks, which were
    the largest step of a cached ``view``'s first frame; a change within any 32 bits of a
    block always changes its CRC, any other all but once in 2**32), read into one buffer.
    Blocks of 4 KiB: a log written again (another run, the same size and mtime) differs in
    every block; an edit in place changes the ctime, the first guard."""
    if size <= WHOLE_BYTES:  # (its size, no more: /proc/self/pagemap says 0, and never ends)
        left = size
        while left > 0 and (block := f.read(min(1 << 20, left))):
            h.update(block)
            left -= len(block)
        return
    step = (size - SAMPLE_BYTES) // (SAMPLES + 1)
    block = bytearray(SAMPLE_BYTES)
    view = memoryview(block)
    crcs = array.array("L")
    for k in range(SAMPLES + 2):
        f.seek(k * step if k <= SAMPLES else size - SAMPLE_BYTES)
        n = f.readinto(block)
        crcs.append(zlib.crc32(view[:n]))
    h.update(b"crc32 " + crcs.tobytes())


# What an entry holds that its format's older bundles may lack (and still read, slower or
# without it): an entry made before is made again once, not served without it.  "program
# waits": the runtime stream's waits for values as items, each with its wait (an entry made
# before drew them running, a review found).  (The code that makes an entry is in the key
# too, ``code_digest``: a change to it needs no word here.)
ENTRY_EXTRAS = "sampled integrals, program waits"

# The code that decides what an entry holds: every module of these packages (the readers,
# the runtime stream's among them; the builder; the model; the bundle's writer and this
# cache; the loader that says which inputs and warnings go in) and these modules besides
# (what the others import from elsewhere: errors, the words of warnings), relative to the
# ``legate_prof`` package folder.
CODE_PACKAGES = ("read", "assemble", "model", "store", "load")
CODE_MODULES = ("__init__.py", "errors.py", "file_signatures.py", "present/units.py",
                "present/ranks.py", "present/terminal.py")
# The package folder whose sources ``code_digest`` hashes: None, this one's (tests point it
# at a changed copy of the sources)
CODE_ROOT = None
_CODE_DIGESTS = {}  # root -> its digest: worked out once a process


def code_digest(root=None):
    """A hash of the source of the code that makes an entry (``CODE_PACKAGES``,
    ``CODE_MODULES`` under ``root``, else ``CODE_ROOT``, else this package's folder), so
    an entry made by other code (a developer's edit, a checkout of git main between
    releases) is never found: made again, the old one evicted in its turn.  Its contents,
    not its files' sizes and mtimes: a checkout or a copy rewrites unchanged files' mtimes
    (every entry made again, needlessly), while an edit that kept the size and mtime would
    be missed.  ~0.5 MB in ~55 files, about 1 ms once a process (docs/performance.md).
    ``b""`` where there is no source to hash (a package installed as .pyc alone, or in a
    zip): the version in the key decides alone, as it did before."""
    root = root if root is not None else CODE_ROOT
    digest = _CODE_DIGESTS.get(root)
    if digest is None:
        where = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) if root is None \
            else os.fspath(root)
        digest = _CODE_DIGESTS[root] = _hash_sources(where)
    return digest


def _hash_sources(root):
    """``code_digest``'s work (``source_digest`` of ``CODE_PACKAGES`` and ``CODE_MODULES``)."""
    return source_digest(root, CODE_PACKAGES, CODE_MODULES)


def source_digest(root, packages, modules=()):
    """A sha256 of the ``.py`` sources under each of ``packages`` (folders under ``root``,
    and their subfolders; "" is ``root``'s whole tree) and of ``modules`` (files under
    ``root``): each file's name, length and bytes, in the order of names (what the cache's
    key and the kept results' key hash, ``results.code_stamp``).  ``b""`` where a package
    holds no source (an install of .pyc alone) or none can be read."""
    names = list(modules)
    h = hashlib.sha256()
    try:
        for package in packages:
            here = [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                    for d, _, files in os.walk(os.path.join(root, package))
                    for f in files if f.endswith(".py")]  # (sorted below)
            if not here:
                return b""  # (sources left out: .pyc alone)
            names += here
        for name in sorted(names):
            h.update(_source_bytes(root, name))
    except OSError:
        return b""
    return h.digest()


def _source_bytes(root, name):
    """What ``source_digest`` hashes of one file: its name, length and bytes; its name and
    "missing" or "unreadable" where it cannot be read (a folder named ``x.py``, a file of
    another user's): the rest still decides."""
    tag = name.encode("utf-8", "surrogateescape")
    try:  # (os.open, one read of its size: open()'s buffered file took 0.5 ms more)
        fd = os.open(os.path.join(root, name), os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return tag + b"\0missing\0"
    except OSError:
        return tag + b"\0unreadable\0"
    try:
        data = os.read(fd, os.fstat(fd).st_size + 1)
    except OSError:
        return tag + b"\0unreadable\0"
    finally:
        os.close(fd)
    return tag + f"\0{len(data)}\0".encode() + data


def cache_key(paths):
    """Changes whenever any input could have changed (or the bundle format did, or the code
    that makes an entry: ``code_digest``)."""
    from legate_prof import __version__
    from legate_prof.file_signatures import BUNDLE_VERSION
    h = hashlib.sha256(f"bundle v{BUNDLE_VERSION} with {ENTRY_EXTRAS}, "
                       f"legate_prof {__version__}, code ".encode() + code_digest())
    for p in sorted(os.path.abspath(p) for p in paths):
        h.update(_file_digest(p))
    return h.hexdigest()[:32]


# what a file hashed to, in this process, by its place and times: a command asks its run's key
# three times (its cache entry, its kept answers, the answer's), and the copy answering ahead
# as often again — 0.3-1.0 s each for 1,000 ranks' logs
_DIGESTS = {}
SETTLED_NS = 2_000_000_000  # a file not changed for this long is remembered (see below)


def _file_digest(path):
    """The hash of one input: its name, size, times, inode and device, and its contents
    (``_sample``).  Remembered only for a file whose times are older than SETTLED_NS: a
    change within the clock's tick of the last one (coarse, milliseconds) leaves the times
    as they were, and only its contents tell (git's "racily clean" entries)."""
    f, st = open_regular(path)
    with f:
        seen = (path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
        digest = _DIGESTS.get(seen)
        if digest is None:
            h = hashlib.sha256("\0".join(map(str, seen)).encode("utf-8", "surrogateescape")
                               + b"\0")  # (a name not UTF-8: its bytes)
            _sample(f, st.st_size, h)
            digest = h.digest()
            if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLED_NS:
                _DIGESTS[seen] = digest
    return digest


def entry_path(paths):
    d = cache_dir()
    return None if d is None else d / f"{cache_key(paths)}{ENTRY_SUFFIX}"


ENTRY_NAME = re.compile(r"[0-9a-f]{32}\.lpbundle")
STAMP_NAME = re.compile(r"[0-9a-f]{32}\.checked")
OLD_TEMPORARY_NAME = re.compile(r"\.[0-9a-f]{32}\.lpbundle\..+\.tmp")  # (writers before .lp-)
_SAID = set()  # cache folders already said to be untrusted, in this process
_MADE = set()  # cache folders this process made, not yet said to be kept in (``_trusted_entry``)


def folder_problem(directory):
    """Why ``directory`` may not hold this user's cache (another user's, writable by others,
    not a folder), or None; made (0700) when missing.  POSIX only."""
    if os.name != "posix":
        return None
    d = Path(directory)
    try:
        if not d.exists():
            d.mkdir(parents=True, mode=0o700)
            _MADE.add(str(d))
        st = os.stat(d)  # (a link to a folder of the user's own elsewhere: theirs to make)
    except OSError as e:
        return f"cannot be made or read ({e.strerror or e})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != os.getuid():
        return f"belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"can be written by others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _trusted_entry(paths, note, entry=None):
    """The entry of ``paths`` (``entry``: as worked out before) in a cache folder that can be
    trusted, or None (no cache; or its folder cannot be trusted: said once, and nothing in
    it read or written)."""
    entry = entry_path(paths) if entry is None else Path(entry)
    if entry is None:
        return None
    problem = folder_problem(entry.parent)  # (made here, or by the kept answers before:
    first = str(entry.parent) in _MADE      # said once all the same — a review saw no word)
    _MADE.discard(str(entry.parent))
    if problem:
        if str(entry.parent) not in _SAID:
            _SAID.add(str(entry.parent))
            note(f"legate_prof: note: not using the cache folder {entry.parent}: it {problem} "
                 "(LEGATE_PROF_CACHE_DIR chooses another, '' turns the cache off)")
        return None
    if first:
        note(f"{FIRST_USE_NOTE}{entry.parent} to reopen fast "
             "(LEGATE_PROF_CACHE_DIR moves it, '' or --no-cache turns it off)")
    return entry


# the cache folder's first use, said once: no part of an answer kept (``cli.answers``)
FIRST_USE_NOTE = "legate_prof: note: keeping built timelines in "


STAMP_TEXT = re.compile(rb"\d+ \d+ \d+ \d+ \d+")  # (``_stat_line``)


def _own(path, pattern, first_bytes):
    """True for a file the cache made: a regular file of this user's (not a link) named by
    ``pattern`` whose first bytes ``first_bytes`` accepts (a bundle's magic, a stamp's
    numbers)."""
    if not pattern.fullmatch(path.name):
        return False
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or (os.name == "posix" and st.st_uid != os.getuid()):
            return False
        f, _ = open_regular(path, follow=False)
        with f:
            return first_bytes(f.read(256))
    except OSError:
        return False


def _bundle_bytes(head):
    from legate_prof.file_signatures import BUNDLE
    return head.startswith(BUNDLE)


def _stamp_bytes(head):
    return STAMP_TEXT.fullmatch(head) is not None


def load_cached(paths, note=print):
    """The cached model of these inputs, or None (none, stale or damaged: rebuilt by caller)."""
    from legate_prof.store.bundle_file import read_bundle
    try:
        entry = _trusted_entry(paths, note)
    except OSError:
        return None
    if entry is None or not os.path.lexists(entry):
        return None
    if not _regular(entry):
        note(f"legate_prof: note: {entry} is not a regular file; removed it, rebuilding")
        _drop(entry)
        return None
    stamped = _stamp_matches(entry)
    try:
        model = read_bundle(entry, check="structure" if stamped else True)
    except ProfileError as e:
        note(f"legate_prof: note: cached timeline was unreadable ({e.problem}); rebuilding")
        _drop(entry)
        return None
    # (a full or read-only cache: ``atomic_output`` says so as a ProfileError; the entry
    # read is served all the same — a review's full tmpfs ended `stats` with exit 2)
    with contextlib.suppress(OSError, ProfileError):
        used = time.time() - os.stat(entry).st_mtime > USED_RESOLUTION_S
        if used:
            os.utime(entry)  # recently used: evicted last
        if used or not stamped:
            _write_stamp(entry)  # its values are checked: with the ctime utime just gave it
    return model


def _regular(path):
    """True for a regular file of this user's (not a link to one: entries are ours, never
    links; nor another user's)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and (os.name != "posix" or st.st_uid == os.getuid())


def _drop(entry):
    for p in (entry, _stamp_path(entry)):
        with contextlib.suppress(OSError):
            p.unlink()


def _stamp_path(entry):
    return entry.with_suffix(STAMP_SUFFIX)


def _stat_line(entry):
    st = os.stat(entry)
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}"


def _stamp_matches(entry):
    """True when the entry is as it was when its values were last known sound."""
    try:
        f, _ = open_regular(_stamp_path(entry), follow=False)
        with f:
            return f.read(4096).decode() == _stat_line(entry)
    except (OSError, UnicodeDecodeError):
        return False


def _write_stamp(entry):
    from legate_prof.output_file import atomic_output
    if os.path.lexists(_stamp_path(entry)) and not _regular(_stamp_path(entry)):
        _stamp_path(entry).unlink()  # (a FIFO there would be written into: it would block)
    with atomic_output(_stamp_path(entry), mode=0o600) as tmp:
        Path(tmp).write_text(_stat_line(entry))


def store_cached(model, paths, note=print, stop=None, entry=None):
    """Write the entry (through a temporary file), then keep the cache within its bound.
    ``stop`` (a function): asked as the entry is written; when it says so, the write ends
    with ``bundle_file.WriteStopped`` and no entry, nor any part of one, is left.
    ``entry``: the entry of ``paths`` as they were when the model was read from them
    (``entry_path`` then): else the entry of ``paths`` as they are now."""
    from legate_prof.store.bundle import write_bundle
    entry = _trusted_entry(paths, note, entry)
    if entry is None:
        return None
    if os.path.lexists(entry) and not _regular(entry):
        _drop(entry)
    with _writing(entry):
        write_bundle(model, entry, stop=stop, mode=0o600)
        _write_stamp(entry)  # written from a model we built: its values are sound
    evict(entry.parent, _max_bytes(), keep=entry)
    return entry


WRITING_SUFFIX = ".writing"
WAIT_FOR_WRITER_S = 30.0  # a writer slower than this (stopped, a slow disk): built here


@contextlib.contextmanager
def _writing(entry):
    """Held while ``entry`` is written: ``KEY.writing``, locked, says so to a command that
    finds no entry (``wait_for_entry``); removed once the entry is there.  The lock goes with
    its process, however it ends: a killed writer never leaves anyone waiting."""
    lock = entry.with_suffix(WRITING_SUFFIX)
    fd = None
    try:
        import fcntl
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (ImportError, OSError):  # (no locks here, or another writes it too: no matter)
        if fd is not None:
            os.close(fd)
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                lock.unlink()
            os.close(fd)


def wait_for_entry(paths, timeout_s=None):
    """Wait while another process writes the entry of ``paths`` (a command's copy keeping
    the run's timeline, a viewer): reopening it is faster than building the same timeline
    beside the writer (the guide's N = 10 M example, at once after ``stats``: ~1.5 s of
    waiting against ~3 s of building on a shared machine).  True when one was being
    written and is done."""
    try:
        entry = _trusted_entry(paths, note=lambda _: None)
    except OSError:
        return False
    if entry is None:  # (a folder others can write in: no one's lock is waited for)
        return False
    try:
        import fcntl
        f, st = open_regular(entry.with_suffix(WRITING_SUFFIX), follow=False)
    except (ImportError, OSError):
        return False
    with f:
        if os.name == "posix" and st.st_uid != os.getuid():
            return False
        end = time.monotonic() + (WAIT_FOR_WRITER_S if timeout_s is None else timeout_s)
        while True:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
                return True
            except OSError:
                if time.monotonic() > end:
                    return False
                time.sleep(0.05)


def evict(directory, max_bytes, keep=None):
    """Delete least recently used entries until the total is at most ``max_bytes``: only the
    cache's own entries count and go (``_own``), with their stamps."""
    entries = []
    for p in Path(directory).glob(f"*{ENTRY_SUFFIX}"):
        if not _own(p, ENTRY_NAME, _bundle_bytes):
            continue
        with contextlib.suppress(OSError):
            st = p.stat()
            entries.append((st.st_mtime, st.st_size, p))
    total = sum(e[1] for e in entries)
    for _, size, p in sorted(entries, key=lambda e: e[0]):
        if total <= max_bytes:
            break
        if keep is not None and p == keep:
            continue
        with contextlib.suppress(OSError):
            p.unlink()
            total -= size
        if _own(_stamp_path(p), STAMP_NAME, _stamp_bytes):
            with contextlib.suppress(OSError):
                _stamp_path(p).unlink()
    for tmp in Path(directory).glob(f".*{ENTRY_SUFFIX}.*.tmp"):  # a writer killed mid-entry
        if ".lp-" in tmp.name or not _own(tmp, OLD_TEMPORARY_NAME, _bundle_bytes):
            continue  # (named for its process: output_file's sweep knows when)
        with contextlib.suppress(OSError):
            if time.time() - tmp.stat().st_mtime > STALE_TMP_S:
                tmp.unlink()
    for stamp in Path(directory).glob(f"*{STAMP_SUFFIX}"):  # of entries removed otherwise
        if _own(stamp, STAMP_NAME, _stamp_bytes) and not stamp.with_suffix(ENTRY_SUFFIX).exists():
            with contextlib.suppress(OSError):
                stamp.unlink()
    return total
