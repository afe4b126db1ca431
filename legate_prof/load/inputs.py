"""The inputs a user gives, sorted out before anything is built: folders expanded to the
profiles in them, repeats dropped, each file's kind sniffed from its first bytes, and only
regular files opened (a FIFO would block, a device never ends)."""

from __future__ import annotations

import hashlib
import os
import re
import stat
import zlib

from legate_prof.errors import ProfileError
from legate_prof.file_signatures import BUNDLE, GZIP, LEGION_LOG, RUNTIME_STREAM


def _check_regular(path):
    """A FIFO would block forever and a device never ends: refuse all but regular files."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None
    if stat.S_ISDIR(st.st_mode):
        raise ProfileError(path, "is a directory; pass the legate_*.prof files in it")
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
        raise ProfileError(path, f"is {kind}, not a file")
    if st.st_size == 0:
        raise ProfileError(path, "is empty (0 bytes)")
    return st


def sniff(path) -> str:
    """'legion', 'bundle', 'runtime', 'text' or 'unknown' from a file's first bytes."""
    _check_regular(path)
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None
    inner = _gzipped_head(path) if head.startswith(GZIP) else b""
    if inner.startswith(RUNTIME_STREAM) or _cut_in(inner, RUNTIME_STREAM):
        return "runtime"  # (a run's folder gzipped whole: its streams too)
    if head.startswith((LEGION_LOG, GZIP)) or _cut_in(head, LEGION_LOG):
        return "legion"  # (a log cut inside its first line is read as one: "cut short")
    if head.startswith(BUNDLE) or _cut_in(head, BUNDLE):
        return "bundle"
    if head.startswith(RUNTIME_STREAM) or _cut_in(head, RUNTIME_STREAM):
        return "runtime"
    if _other_words(head) or b"\0" in head:
        return "unknown"  # (a Parquet file's first bytes, a file of zeros: read as text)
    try:
        head.decode("utf-8")
        return "text"
    except UnicodeDecodeError:
        return "unknown"


def _gzipped_head(path, size=64, most=1 << 20):
    """The first ``size`` bytes a gzipped file inflates to, member after member (an empty
    first member, or one of 4 bytes, hid a stream: read as a log, a fuzz found), as far as
    its first ``most`` bytes go; what came before damage (b"": it cannot say)."""
    out = b""
    try:
        with open(path, "rb") as f:
            data = f.read(most)
    except OSError:
        return out
    while data and len(out) < size:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += d.decompress(data, size - len(out))
        except zlib.error:
            break
        if not d.eof:
            break
        data = d.unused_data
    return out


def _cut_in(head, magic):
    """Whether the whole file is the start of ``magic`` (at least 4 bytes of it): a file of
    that kind cut short, not a text file (the first 20 bytes of a log were called text)."""
    return 4 <= len(head) < len(magic) and magic.startswith(head)


# files of other formats a user may give back to a command (our exports among them): where
# their first bytes say so, what they are and what to do, in words
OTHER_FORMATS = (
    (8, b"DUCK", "a DuckDB database (as `export --format duckdb` writes): query it with DuckDB "
                 "itself (duckdb FILE); `sql` reads the run's logs or a Parquet export's folder"),
    (0, b"PAR1", "a Parquet file: `sql` reads the folder `export --format parquet` wrote, and "
                 "the other commands the run's logs"),
    (0, b"SQLite format 3\0", "an SQLite database: legate_prof reads the run's logs"))


def _other_words(head):
    return next((words for at, magic, words in OTHER_FORMATS
                 if head[at:at + len(magic)] == magic), None)


def other_format(path):
    """Words for a file that is no profile but says what it is in its first bytes, or None."""
    try:
        with open(path, "rb") as f:
            return _other_words(f.read(64))
    except OSError:
        return None


def _fingerprint(path, st):
    """Size and a hash of the first and last 64 KiB: equal for copies of one file."""
    h = hashlib.sha256(str(st.st_size).encode())
    with open(path, "rb") as f:
        h.update(f.read(1 << 16))
        if st.st_size > 1 << 17:
            f.seek(-(1 << 16), os.SEEK_END)
            h.update(f.read(1 << 16))
    return h.hexdigest()


def distinct_inputs(paths):
    """The inputs without repeats (the same file twice, two copies of it, or a log and a
    gzip of it), and warnings."""
    seen, out, warnings, logs = {}, [], [], _SameLog()
    for p in paths:
        try:
            st = _check_regular(p)
            key = _fingerprint(p, st)
        except (ProfileError, OSError):
            out.append(p)  # reported when read
            continue
        if key in seen:
            same = os.path.samefile(p, seen[key])
            warnings.append(f"warning: {p}: {'the same file as' if same else 'a copy of'} "
                            f"{seen[key]}; read once")
            continue
        first = logs.first_of(p, st)
        if first is not None:
            warnings.append(f"warning: {p}: the same log as {first} (one of them gzipped); "
                            "read once")
            continue
        seen[key] = p
        out.append(p)
    return out, warnings


_HEAD = 1 << 16  # the bytes of a log whose hash stands for its start, gzipped or not
_HEAD_INPUT = 1 << 20  # the most gzipped bytes inflated to find a gzip's first _HEAD


class _SameLog:
    """Which inputs hold the same log, one of them gzipped (legate_0.prof.gz of the
    legate_0.prof beside it was "rank 0 again ... of another run?", an error).  Only a gzip
    and a log of the size its trailer says (mod 2^32) are compared: their first 64 KiB (the
    gzip's inflated that far, no further), a Legion Prof log's start, then the CRC-32 (the gzip's trailer holds it, a
    plain log's is computed: 0.05 s a 126 MB log, and only then); inputs with no gzip
    among them cost nothing more."""

    def __init__(self):
        self.kept = {}  # log size mod 2^32 -> [{path, gz, crc, head}]

    def first_of(self, path, st):
        """The input seen before holding the same log as ``path`` (then not kept), or None."""
        try:
            new = _log_size(path, st)
            for old in self.kept.get(new["size"], ()):
                if (new["gz"] or old["gz"]) and _head(new) == _head(old) and new["log"] \
                        and _crc(new) is not None and _crc(new) == _crc(old):
                    return old["path"]
        except (OSError, zlib.error):
            return None
        self.kept.setdefault(new["size"], []).append(new)
        return None


def _log_size(path, st):
    """What ``_SameLog`` knows of an input at first: the size of the log it holds (a
    gzip's trailer says it: its CRC-32 is read with it)."""
    with open(path, "rb") as f:
        gz = st.st_size >= 18 and f.read(2) == GZIP
        if not gz:
            return {"path": path, "gz": False, "size": st.st_size & 0xFFFFFFFF}
        f.seek(-8, os.SEEK_END)
        tail = f.read(8)
    return {"path": path, "gz": True, "size": int.from_bytes(tail[4:], "little"),
            "crc": int.from_bytes(tail[:4], "little")}


def _head(log):
    """A hash of the log's first 64 KiB (a gzip's inflated that far only), kept."""
    if "head" not in log:
        with open(log["path"], "rb") as f:
            if not log["gz"]:
                out = f.read(_HEAD)
            else:
                inflate, out, taken = zlib.decompressobj(16 + zlib.MAX_WBITS), b"", 0
                while len(out) < _HEAD and taken < _HEAD_INPUT and not inflate.eof:
                    chunk = f.read(_HEAD)
                    if not chunk:
                        break
                    taken += len(chunk)
                    out += inflate.decompress(chunk, _HEAD - len(out))
        log["head"] = hashlib.sha256(out).digest()
        # (a Legion Prof log's start, or its CRC is never worked out: a review's forged gzip
        # beside a 100 GB sparse file of zeros, their heads alike, read it all: 141 s)
        log["log"] = out.startswith(LEGION_LOG)
    return log["head"]


def _crc(log):
    """The log's CRC-32 (a gzip's trailer's; a plain log's computed once), None if
    unreadable."""
    if "crc" not in log:
        log["crc"] = _plain_crc(log["path"])
    return log["crc"]


def _plain_crc(path):
    """A plain log's CRC-32, as a gzip of it holds in its trailer; None if unreadable."""
    crc = 0
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 22):
                crc = zlib.crc32(chunk, crc)
    except OSError:
        return None
    return crc


def plan_inputs(paths):
    """(the inputs without repeats, the kind of each readable one — see ``sniff`` —, errors of
    the unreadable ones, warnings about repeats)."""
    paths, warnings = distinct_inputs(paths)
    kinds, errors = {}, []
    for path in paths:
        try:
            kinds[path] = sniff(path)
        except ProfileError as e:
            errors.append(e)
    return paths, kinds, errors, warnings


def expand_inputs(paths, logs_only=False, note=None):
    """Inputs with each directory replaced by the profile files in it: its bundles
    (``*.lpbundle``) if it has any and none of its Legion Prof logs (``*.prof``,
    ``*.prof.gz``) is newer than they are, else its logs (``logs_only``: always; a rerun
    that left old bundles beside new logs is read from the logs, and ``note`` says so)."""
    out = []
    for p in paths:
        if not os.path.isdir(p):
            out.append(p)
            continue
        try:
            names = sorted(os.listdir(p), key=_natural)
        except OSError as e:  # (a folder that cannot be listed: mode 000 or 111)
            raise ProfileError(p, f"cannot list the folder ({e.strerror or e})") from None
        logs = [os.path.join(p, n) for n in names if n.endswith((".prof", ".prof.gz"))]
        bundles = [] if logs_only else [os.path.join(p, n) for n in names
                                        if n.endswith(".lpbundle")]
        if bundles and logs:
            why = ("its .prof logs are newer than its .lpbundle files"
                   if max(map(_mtime, logs)) > min(map(_mtime, bundles))
                   else _not_converted_from(bundles, logs))
            if why:
                if note:
                    note(f"legate_prof: note: {p}: {why}; reading the logs "
                         f"(`legate_prof convert --per-rank {p}` again to reopen fast)")
                bundles = []
        found = bundles or logs
        if not found:
            raise ProfileError(p, "is a directory with no .prof or .lpbundle files in it")
        out.extend(found)
    return out


def streams_left_beside(paths):
    """Notes for the Legion Prof logs given alone whose array-runtime stream lies beside them
    (``X_0.prof`` and ``X_0.runtime.prof``, as ``record`` writes them) but was not given:
    without it the operations and arrays of that rank are missing, and its lines are those
    Legion's log names (its tasks', not the program's every operation)."""
    given = {os.path.abspath(p) for p in paths}
    out, said = [], set()
    for p in paths:
        if os.path.abspath(p) in said:  # (a file given twice: said once)
            continue
        said.add(os.path.abspath(p))
        name = os.path.basename(p)
        stem = name[:-len(".prof.gz")] if name.endswith(".prof.gz") else \
            name[:-len(".prof")] if name.endswith(".prof") else None
        if stem is None or stem.endswith(".runtime"):
            continue
        folder = os.path.dirname(os.path.abspath(p))
        streams = [os.path.join(folder, stem + ".runtime.prof" + gz) for gz in ("", ".gz")]
        stream = next((s for s in streams if os.path.isfile(s)), None)
        if stream is not None and not given & set(streams):  # (the gzip of it given: read)
            out.append(f"legate_prof: note: {p}: the array runtime's stream beside it "
                       f"({os.path.basename(stream)}) was not given: its operations and arrays are "
                       "left out, and the source lines are Legion's alone (give the run's "
                       "folder, or both files)")
    return out


def inputs_notes(paths) -> list:
    """What the inputs leave out that lies beside them (a log's runtime stream not given:
    its operations and arrays missing), one sentence each, worked out afresh: a window opened
    from File → Open said it on the terminal only (a GUI walk), and a kept answer missed it
    for a stream copied in later (part of its question: ``cli.answers``; here, below
    the door, so that an answer asked again imports no query)."""
    try:
        paths = expand_inputs([str(p) for p in paths])
    except Exception:  # noqa: BLE001 - what cannot be listed is said where it is read
        return []
    return [n.removeprefix("legate_prof: note: ") for n in streams_left_beside(paths)]


def _not_converted_from(bundles, logs):
    """Why the bundles do not stand for the logs (None: they do): a log they were not
    converted from, or one of another size than they say (bundles that do not say: the
    times decide alone)."""
    from legate_prof.store.bundle_file import bundle_sources
    sizes = {}
    for b in bundles:
        try:
            if not stat.S_ISREG(os.stat(b).st_mode):  # (a FIFO, a device, a folder so named)
                return f"{os.path.basename(b)} is not a regular file"
        except OSError:
            return f"{os.path.basename(b)} cannot be read"
        said = bundle_sources(b)
        if said is None:
            return None
        sizes.update(said)
    for log in logs:
        name = os.path.basename(log)
        if name not in sizes:
            return f"its .lpbundle files were not converted from {name}"
        try:
            if sizes[name] != os.stat(log).st_size:
                return "its .prof logs are not the ones its .lpbundle files were converted from"
        except OSError:
            return f"{name} cannot be read"
    return None


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError:  # gone meanwhile: reading it will say so
        return 0.0


def _natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]
