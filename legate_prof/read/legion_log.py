"""Reader for Legion Prof binary logs (``legate_N.prof``), driven by the file's own preamble.

Record ids change between Legion versions, so every record type is looked up by the name the
preamble gives it.  Fixed-size records come in long runs of one type (Legion flushes its buffers
kind by kind), and each run is decoded in one ``numpy.frombuffer`` call with a packed structured
dtype; only descriptor records that carry strings, points or uuids are decoded one by one.
"""

from __future__ import annotations

import errno
import mmap
import os
import re
import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

from legate_prof.errors import ProfileError, ProfileWarning
from legate_prof.file_signatures import LEGION_LOG as MAGIC

from legate_prof.read.gzip_input import (GZIP_CHUNK, MIN_GZIP_LIMIT,  # noqa: F401
                                        gunzip_bounded, gzip_limit)


# Preamble type name -> numpy dtype for the fixed-size scalar types.
_SIGNED_4 = {"int", "ProcKind", "MemKind", "MappingCallKind", "RuntimeCallKind",
             "DepPartOpKind", "maxdim"}
_SIGNED_8 = {"long long", "timestamp_t"}
_VARIABLE_TYPES = {"string", "point", "array", "uuid"}

# Fields the preamble declares but the writer emits only under a condition:
# (record, field) -> (field it depends on, value that makes it present).
CONDITIONAL_FIELDS = {
    ("PhysicalInstanceUsage", "redop"): ("mode", 4),
}

# Linear time: each repetition starts with the comma the one before cannot take, and lines
# longer than any real one are refused before the pattern sees them.
_PREAMBLE_LINE = re.compile(r"^(\w+)\s*\{id:(\d+)((?:,[^,}]*)*)\}$")
MAX_PREAMBLE_LINE = 1 << 16  # Legion's longest is under 1,000 characters


def scalar_dtype(type_name: str, size: int) -> str:
    if type_name == "bool" and size == 1:
        return "u1"
    if size == 4:
        return "<i4" if type_name in _SIGNED_4 else "<u4"
    if size == 8:
        return "<i8" if type_name in _SIGNED_8 else "<u8"
    if size in (1, 2):
        return {1: "u1", 2: "<u2"}[size]
    raise ValueError(f"unsupported field size {size} for type {type_name!r}")


_SCALARS = {}  # (type, size) -> its struct: a variable record's numbers, one at a time


def _scalar(type_name, size):
    """The ``struct.Struct`` reading one ``scalar_dtype(type_name, size)`` value (a Python
    int; numpy's one-value arrays cost ~3x its time, 1,000 ranks' names and descriptions)."""
    got = _SCALARS.get((type_name, size))
    if got is None:
        dt = np.dtype(scalar_dtype(type_name, size))
        got = _SCALARS[type_name, size] = struct.Struct(
            "<" + {("u", 1): "B", ("u", 2): "H", ("i", 4): "i", ("u", 4): "I", ("i", 8): "q",
                   ("u", 8): "Q"}[dt.kind, dt.itemsize])
    return got


@dataclass
class RecordLayout:
    """How one record type is laid out on disk, built from its preamble line."""

    name: str
    rid: int
    fields: list  # [(field, type, size)]
    dtype: np.dtype | None = None  # packed, with leading '_id', when every field is fixed-size
    condition: tuple | None = None  # (field, value, extended dtype) for a conditional tail field
    _switch: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def fixed(self):
        return self.dtype is not None

    def condition_reader(self):
        """(offset of the conditional field's switch in a record, a reader of it there): the
        switch of each record of a short run read one by one (``_conditional_count``)."""
        if self._switch is None:  # (a format, not a reader: a log's layouts are pickled)
            dt, offset = self.dtype.fields[self.condition[0]][:2]
            code = {1: "b", 2: "h", 4: "i", 8: "q"}[dt.itemsize]
            self._switch = (offset, "<" + (code.upper() if dt.kind == "u" else code))
        offset, fmt = self._switch
        reader = _READERS.get(fmt)
        if reader is None:
            reader = _READERS[fmt] = struct.Struct(fmt).unpack_from
        return offset, reader

    def condition_field_name(self):
        return _cond_field_name(self)


_READERS = {}  # struct format -> its reader (``RecordLayout.condition_reader``)
_FIELD_SIZES = {-1, 1, 2, 4, 8}
# preambles parsed (text -> layouts; a layout is not changed once parsed): 1,000 ranks' logs
# share one, which took 3.5 ms a file to parse
_PREAMBLES = {}

# A name (a task's, a variant's, a provenance, a host…) is repeated in every output line of
# every item that bears it: one of 10 MB named by 300 tasks wanted 23 GiB for Perfetto and
# wrote a 3.1 GB Chrome trace.  Legion's longest are under 100 characters.
MAX_NAME_CHARS = 1000
LONG_STRINGS = {("BacktraceDesc", "backtrace"): 1 << 16}  # (read, never shown per item)


def _parse_preamble_line(line):
    """``Name {id:N, field:type:size, ...}`` -> RecordLayout; ValueError when damaged."""
    if len(line) > MAX_PREAMBLE_LINE:
        raise ValueError(f"{len(line):,} characters long")
    m = _PREAMBLE_LINE.match(line.strip())
    if not m:
        raise ValueError("not 'Name {id:N, field:type:size, ...}'")
    name, rid, rest = m.group(1), int(m.group(2)), m.group(3)
    if rid >= 2**31:
        raise ValueError("record id too large")
    fields = []
    for part in rest.split(","):
        part = part.strip()
        if not part:
            continue
        bits = part.split(":")
        if len(bits) != 3:
            raise ValueError(f"field {part[:30]!r} is not name:type:size")
        fname, ftype, size = bits[0].strip(), bits[1].strip(), int(bits[2])
        if not fname or not ftype:
            raise ValueError("empty field name or type")
        if ftype not in _VARIABLE_TYPES and size not in _FIELD_SIZES:
            raise ValueError(f"field {fname} has size {size}")
        if (ftype in ("maxdim", "uuid_size") or ftype not in _VARIABLE_TYPES) and size < 0 \
                and ftype != "string":
            raise ValueError(f"field {fname} has size {size}")
        fields.append((fname, ftype, size))
    names = [f[0] for f in fields]
    if len(set(names)) != len(names):
        raise ValueError("a field is declared twice")
    for (rname, fname), (dep, _value) in CONDITIONAL_FIELDS.items():
        if rname == name and fname in names and (dep not in names
                                                 or names.index(dep) > names.index(fname)):
            raise ValueError(f"{fname} is written only after {dep}, which is missing")
    return _build_layout(name, rid, fields)


def _build_layout(name, rid, fields):
    layout = RecordLayout(name, rid, fields)
    present = []
    for fname, ftype, size in fields:
        cond = CONDITIONAL_FIELDS.get((name, fname))
        if cond is not None:
            layout.condition = (cond[0], cond[1], fname, ftype, size)
            continue
        if ftype in _VARIABLE_TYPES or size < 0 or ftype in ("uuid_size", "maxdim"):
            return layout  # decoded record by record
        present.append((fname, ftype, size))
    try:
        base = [("_id", "<i4")] + [(f, scalar_dtype(t, s)) for f, t, s in present]
        layout.dtype = np.dtype(base)
        if layout.condition:
            _, _, fname, ftype, size = layout.condition
            ext = np.dtype(base + [(fname, scalar_dtype(ftype, size))])
            layout.condition = layout.condition[:2] + (ext,)
    except ValueError:
        layout.dtype = None
    return layout


@dataclass
class LegionLog:
    """Everything read from one file: header facts and one table per record name.

    ``tables[name]`` is a numpy structured array for fixed-size record types and a list of
    dicts for the variable-size descriptors.
    """

    path: str
    version: str
    legion_version: str
    layouts: dict
    tables: dict = field(default_factory=dict)
    # record -> index in the file (0-based, over all records) of each row of its table, for
    # the records whose file order matters (``SEQ_TABLES``: a MetaWaitInfo follows the
    # MetaInfo / MessageInfo it belongs to)
    seq: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    record_count: int = 0
    byte_size: int = 0
    cut: bool = False  # the file ends early or is damaged: its records stop before the run's end

    def table(self, name):
        return self.tables.get(name, ())

    def count(self, name):
        return len(self.tables.get(name, ()))

    def positions(self, name):
        """File position (record index) of each row of ``name``'s table, or None."""
        p = self.seq.get(name)
        return p if p is not None and len(p) == self.count(name) else None


COPY_AT_MOST = 1 << 30  # bytes of a plain log read into memory, not mapped (see LegionProfReader)


def _read_whole(f, size):
    """The file's first ``size`` bytes, or fewer where it was cut short while read (a log
    cut short is read up to the cut, with a warning, as any truncated log)."""
    buf = bytearray(size)
    view, got = memoryview(buf), 0
    while got < size:
        n = f.readinto(view[got:])
        if not n:
            break
        got += n
    view.release()
    if got < size:
        del buf[got:]
    return buf


def _map_what_fits(f, size):
    """(a map of the file, None) — or, where the process's address space cannot hold it all
    (``prlimit --as``; a log with a sparse 100 GB tail: a review lost the rank to "Cannot
    allocate memory"), a map of as much of its start as fits, and a warning saying so."""
    length = size
    while True:
        try:
            return (mmap.mmap(f.fileno(), 0 if length == size else length,
                              access=mmap.ACCESS_READ),
                    None if length == size else
                    f"only its first {length:,} of {size:,} bytes could be mapped (this "
                    "process's memory limit): the records after them are left out")
        except OSError as e:
            if e.errno != errno.ENOMEM or length <= MAP_AT_LEAST:
                raise
            length = max(length // 2 // mmap.ALLOCATIONGRANULARITY * mmap.ALLOCATIONGRANULARITY,
                         MAP_AT_LEAST)


MAP_AT_LEAST = 1 << 20  # a log's start mapped under a memory limit, at the least


class LegionProfReader:
    """Reads one Legion Prof binary log; tolerant of version drift and truncation.

    ``mapped`` (the class's default: False) maps a plain log instead of copying it: 0.1 s
    less a 126 MB rank, but a file cut short under the map (legate run again into the folder)
    kills the process with SIGBUS, which Python cannot catch.  Only the rank workers map:
    their parent sees a worker die and reads the ranks again itself, from copies.  A log
    over ``COPY_AT_MOST`` is mapped all the same: the page cache holds it once, where a copy
    would hold it twice (and a sparse 50 GB file is not copied to be found empty)."""

    mapped = False

    def __init__(self, path):
        self.path = os.fspath(path)

    # -- bytes -----------------------------------------------------------------------------
    def _load_bytes(self):
        try:
            with open(self.path, "rb") as f:
                head = f.read(2)
                size = os.fstat(f.fileno()).st_size
                f.seek(0)
                if head == b"\x1f\x8b":
                    return self._gunzip(f)
                if size == 0:
                    raise ProfileError(self.path, "empty file, not a Legion Prof log")
                if not self.mapped and size <= COPY_AT_MOST:
                    try:
                        return _read_whole(f, size), None
                    except MemoryError:
                        pass  # (a limited address space: the map may still fit)
                return _map_what_fits(f, size)
        except OSError as e:
            raise ProfileError(self.path, e.strerror or str(e)) from None

    def _gunzip(self, f):
        """``gzip_input.gunzip_bounded`` of this log."""
        return gunzip_bounded(self.path, f)

    # -- header and preamble ---------------------------------------------------------------
    def parse_header(self, raw):
        if raw[: len(MAGIC)] != MAGIC:
            if len(raw) < len(MAGIC) and MAGIC.startswith(bytes(raw)):
                raise ProfileError(self.path, f"a Legion Prof log cut short inside its first "
                                              f"line ({len(raw)} bytes): nothing to read")
            raise ProfileError(self.path, "not a Legion Prof binary log (no 'FileType: "
                                          "BinaryLegionProf' header)")
        nl = raw.find(b"\n")
        version = bytes(raw[len(MAGIC):nl]).decode("ascii", "replace").strip()
        pos = nl + 1
        legion_version = ""
        if "." not in version:  # v: 1011 and later carry the Legion version on line 2
            nl = raw.find(b"\n", pos)
            legion_version = bytes(raw[pos:nl]).decode("utf-8", "replace").strip()
            pos = nl + 1
        end = raw.find(b"\n\n", pos - 1)
        if end < 0:
            raise ProfileError(self.path, "preamble is not terminated (file cut inside the header)")
        text = bytes(raw[pos:end]).decode("utf-8", "replace")
        known = _PREAMBLES.get(text)  # (every rank of a run has the same: parsed once)
        if known is not None:
            return version, legion_version, dict(known), end + 2
        layouts = {}
        names = set()
        for k, line in enumerate(text.split("\n")):
            if not line.strip():
                continue
            try:
                lay = _parse_preamble_line(line)
            except ValueError as e:
                raise ProfileError(self.path, f"damaged preamble line {k + 3} ({e}): "
                                              f"{line[:60]!r}") from None
            if lay.rid in layouts or lay.name in names:
                raise ProfileError(self.path, f"damaged preamble: record {lay.name} (id "
                                              f"{lay.rid}) declared twice")
            layouts[lay.rid] = lay
            names.add(lay.name)
        if len(_PREAMBLES) >= 8:
            _PREAMBLES.clear()
        _PREAMBLES[text] = dict(layouts)
        return version, legion_version, layouts, end + 2

    # -- body ------------------------------------------------------------------------------
    def read(self) -> LegionLog:
        raw, gz_warning = self._load_bytes()
        version, legion_version, layouts, pos = self.parse_header(raw)
        log = LegionLog(self.path, version, legion_version, layouts, byte_size=len(raw))
        if gz_warning:
            log.cut = True
            log.warnings.append(ProfileWarning(self.path, gz_warning))
        if version not in ("1.0", "1011"):
            log.warnings.append(ProfileWarning(
                self.path, f"log format version {version} not seen before; reading by preamble"))
        try:
            self._read_body(raw, pos, layouts, log)
        finally:
            if isinstance(raw, mmap.mmap):
                # Tables hold copies (see _assemble), so the map can go.
                try:
                    raw.close()
                except BufferError:
                    pass
        return log

    def _read_body(self, raw, pos, layouts, log):
        """Read the records after the preamble into ``log``'s tables: where runs of
        fixed-size records lie, the others decoded one by one; where the file is cut or
        damaged, what came before is kept with one warning."""
        body = _Body()
        n = len(raw)
        # each type's layout and how it is read: 0 fixed, maybe in pairs; 1 fixed; 2 decoded
        plan = {rid: (lay, 2 if not lay.fixed else 0 if _pairable(lay) else 1)
                for rid, lay in layouts.items()}
        try:
            while pos < n:
                if pos + 4 > n:
                    raise _Stop(f"file ends inside a record at byte {pos} (truncated)")
                rid = _record_id(raw, pos)[0]
                planned = plan.get(rid)
                if planned is None:
                    raise _Stop(f"unknown record id {rid} at byte {pos} (not in the preamble); "
                                "stopped reading")
                layout, way = planned
                if way == 0:
                    after = _read_pairs(raw, pos, layout, layouts, body)
                    pos = after if after else self._read_fixed(raw, pos, layout, rid, body)
                elif way == 1:
                    pos = self._read_fixed(raw, pos, layout, rid, body)
                else:
                    pos = _read_variable(raw, pos, layout, body)
        except _Stop as stop:
            log.cut = True
            log.warnings.append(ProfileWarning(self.path, f"{stop}; kept {body.count} records"))
        log.record_count = body.count
        if body.state.get("cut"):
            log.warnings.append(ProfileWarning(
                self.path, f"{body.state['cut']:,} name(s) longer than {MAX_NAME_CHARS:,} "
                f"characters cut there (the longest: {body.state['longest']:,} bytes)"))
        log.tables = _assemble(layouts, body, raw)
        log.seq = body.sequences()
        for problem in check_tables(log.tables, log.seq):
            log.warnings.append(ProfileWarning(self.path, problem))

    def _read_fixed(self, raw, pos, layout, rid, body):
        """A run of fixed-size records of one type from ``pos``: the position after it."""
        size = layout.dtype.itemsize
        avail = (len(raw) - pos) // size
        if avail == 0:
            raise _Stop(f"last {layout.name} record is truncated at byte {pos}")
        if layout.condition is not None:
            k = self._conditional_count(raw, pos, layout, rid, avail)
            if k == 0:  # (this record has the conditional field: alone)
                ext = layout.condition[2]
                if pos + ext.itemsize > len(raw):
                    raise _Stop(f"last {layout.name} record is truncated at byte {pos}")
                body.span(layout.name, pos, 1, ext.itemsize, extended=True)
                return pos + ext.itemsize
        else:
            k = 1  # (most runs are short — a meta-task's waits follow it: counted here)
            nxt = pos + size
            short = min(avail, SHORT_RUN)
            while k < short and _record_id(raw, nxt)[0] == rid:
                k += 1
                nxt += size
            if k == SHORT_RUN:
                k = _run_length(raw, pos, size, ((0, rid),), avail, k)
        body.span(layout.name, pos, k, size)
        return pos + k * size

    @staticmethod
    def _conditional_count(raw, pos, layout, rid, avail):
        """Records of a run of a type with a conditional field from ``pos`` without it (0:
        the first has it).  A short run's switches are read one by one with its ids (the 10 M
        example: 20 k runs of instance usages, 5 of 6 under ten records: an array a run took
        four times as long), a longer one's at once."""
        cvalue = layout.condition[1]
        at, switch = layout.condition_reader()
        if switch(raw, pos + at)[0] == cvalue:
            return 0
        size = layout.dtype.itemsize
        k, nxt = 1, pos + size
        short = min(avail, SHORT_RUN)
        while k < short and _record_id(raw, nxt)[0] == rid and switch(raw, nxt + at)[0] != cvalue:
            k += 1
            nxt += size
        if k < SHORT_RUN:
            return k
        k = _run_length(raw, pos, size, ((0, rid),), avail, k)
        arr = np.frombuffer(raw, dtype=layout.dtype, count=k, offset=pos)
        hit = arr[layout.condition[0]] == cvalue
        first = int(hit.argmax())  # (the first with the field; 0 also where none has it)
        return first if hit[first] else k


# Records whose rows keep their place in the file (``LegionLog.positions``).
SEQ_TABLES = frozenset({"MetaInfo", "MessageInfo", "MetaWaitInfo"})


class _Stop(Exception):
    """Reading stops here; the message says where and why."""


class _Body:
    """The records read so far, by type, in file order: where the fixed-size ones lie (runs
    of ``k`` records ``stride`` bytes apart; ``_assemble`` copies them out of the file all
    at once), decoded variable records, and the position of each record of the types whose
    order matters (``SEQ_TABLES``)."""

    def __init__(self):
        self.spans = {}  # name -> [(position, records, stride, has the conditional field)]
        self.records = {}  # name -> [decoded variable records]
        self.runs = {}  # name -> [(first record index, records)] for SEQ_TABLES
        self.count = 0
        self.state = {"max_dim": 3, "uuid_size": 16}

    def span(self, name, pos, k, stride, extended=False):
        """``k`` fixed-size records of ``name`` from ``pos``, ``stride`` bytes apart."""
        self._counted(name, k)
        self.spans.setdefault(name, []).append((pos, k, stride, extended))

    def add(self, name, rec):
        """One decoded variable record of ``name``."""
        self._counted(name, 1)
        self.records.setdefault(name, []).append(rec)

    def _counted(self, name, k):
        if name in SEQ_TABLES:
            self.runs.setdefault(name, []).append((self.count, k))
        self.count += k

    def sequences(self):
        """Each kept record's index in the file, per ``SEQ_TABLES`` type: its runs' records
        numbered at once (an ``arange`` a run was 11 k of them in the guide's 10 M log)."""
        out = {}
        for name, r in self.runs.items():
            first, k = (np.array(c, np.int64) for c in zip(*r))
            out[name] = np.repeat(first - np.cumsum(k) + k, k) + np.arange(int(k.sum()))
        return out


def _read_variable(raw, pos, layout, body):
    """One record with strings or points from ``pos``: the position after it."""
    try:
        rec, nxt = _decode_variable(raw, pos + 4, layout, body.state)
    except _Truncated:
        raise _Stop(f"last {layout.name} record is truncated at byte {pos}") from None
    except _Damaged as e:
        raise _Stop(f"{layout.name} record at byte {pos} is damaged ({e}); stopped reading") \
            from None
    body.add(layout.name, rec)
    return nxt


class _Truncated(Exception):
    pass


class _Damaged(Exception):
    """A value that cannot be right (a dimension count of -3, say): stop reading there."""


def _read_pairs(raw, pos, first, layouts, body):
    """Where records of two fixed-size types alternate from ``pos`` (Legion writes a fill's
    record and its instance's, a copy's and its instances', one after the other): at least
    ``PAIRS_MIN`` such pairs read as one run of each type, the position after them; else 0.
    One run a type, where the records read one by one cost Python's time per record (40 %
    of the records decoded one at a time in the guide's 10 M example).  ``first`` is
    ``_pairable``."""
    size_a = first.dtype.itemsize
    n = len(raw)
    if pos + size_a + 4 > n:
        return 0
    id_a = int.from_bytes(raw[pos:pos + 4], "little", signed=True)
    id_b = int.from_bytes(raw[pos + size_a:pos + size_a + 4], "little", signed=True)
    second = layouts.get(id_b)
    if second is None or second is first or not _pairable(second):
        return 0
    stride = size_a + second.dtype.itemsize
    avail = (n - pos) // stride
    if avail < PAIRS_MIN or raw[pos + stride:pos + stride + 4] != raw[pos:pos + 4]:
        return 0
    k = _run_length(raw, pos, stride, ((0, id_a), (size_a, id_b)), avail)
    if k < PAIRS_MIN:
        return 0
    body.span(first.name, pos, k, stride)
    body.span(second.name, pos + size_a, k, stride)
    return pos + k * stride


def _pairable(layout):
    """A type whose records may be read in pairs: fixed size, no conditional field, and its
    rows' places in the file not kept (``SEQ_TABLES``)."""
    return layout.fixed and layout.condition is None and layout.name not in SEQ_TABLES


PAIRS_MIN = 4  # (fewer alternating pairs are read one record at a time)


def _run_length(raw, pos, stride, ids, avail, done=1):
    """Number of consecutive strides of ``stride`` bytes from ``pos`` holding, at each
    (offset, record id) of ``ids``, that id: a run of records of one type (``((0, id),)``)
    or of two that alternate (the first ``done`` known to)."""
    step = 64
    while done < avail:
        cnt = min(step, avail - done)
        at = pos + done * stride
        bad = np.zeros(cnt, bool)
        for offset, rid in ids:
            bad |= np.ndarray((cnt,), dtype="<i4", buffer=raw, offset=at + offset,
                              strides=(stride,)) != rid
        first = int(bad.argmax())  # (the first other id; 0 also where there is none)
        if bad[first]:
            return done + first
        done += cnt
        step = min(step * 4, RUN_STEP_MAX)  # (bounded: ids read past a run's end are wasted)
    return done


RUN_STEP_MAX = 16384
SHORT_RUN = 64  # (records of a run counted one by one before whole strides are compared)
_record_id = struct.Struct("<i").unpack_from  # (no bytes made of the four: a slice of the
#                                                map was a microsecond, 51 k records a log)


def _decode_variable(raw, pos, layout, state):
    n = len(raw)
    rec = {}
    for fname, ftype, size in layout.fields:
        cond = layout.condition
        if cond is not None and fname == _cond_field_name(layout):
            if rec.get(cond[0]) != cond[1]:
                continue
        if ftype == "string" or size < 0:
            end = raw.find(b"\0", pos)
            if end < 0:
                raise _Truncated
            limit = LONG_STRINGS.get((layout.name, fname), MAX_NAME_CHARS)
            text = bytes(raw[pos:min(end, pos + 4 * limit + 4)]).decode("utf-8", "replace")
            if len(text) > limit:  # (one name shared by every item: repeated in each output)
                text = text[:limit - 1] + "…"
                state["cut"] = state.get("cut", 0) + 1
                state["longest"] = max(state.get("longest", 0), end - pos)
            rec[fname] = text
            pos = end + 1
            continue
        if ftype in ("point", "array"):  # max_dim i64s; an array is all lo, then all hi
            count = state["max_dim"] * (2 if ftype == "array" else 1)
            if pos + 8 * count > n:
                raise _Truncated
            rec[fname] = list(struct.unpack_from(f"<{count}q", raw, pos))
            pos += 8 * count
            continue
        if ftype == "uuid":
            nb = state["uuid_size"]
            if pos + nb > n:
                raise _Truncated
            rec[fname] = bytes(raw[pos:pos + nb]).hex()
            pos += nb
            continue
        if pos + size > n:
            raise _Truncated
        val = _scalar(ftype, size).unpack_from(raw, pos)[0]
        val = bool(val) if ftype == "bool" else val
        rec[fname] = val
        pos += size
        if ftype == "maxdim":
            if not 1 <= val <= 9:  # Legion's LEGION_MAX_DIM is at most 9
                raise _Damaged(f"max_dim {val}")
            state["max_dim"] = val
        elif ftype == "uuid_size":
            if not 0 <= val <= 64:
                raise _Damaged(f"uuid size {val}")
            state["uuid_size"] = val
    return rec, pos


def _cond_field_name(layout):
    for (rname, fname) in CONDITIONAL_FIELDS:
        if rname == layout.name:
            return fname
    return None


def _assemble(layouts, body, raw):
    """One table per record name, rows in file order, without the record id column: the
    fixed-size records copied out of the file by where they lie (not a copy of each run as
    it was read: ~2 us of Python a run, 58 k runs in the guide's 10 M log)."""
    by_name = {lay.name: lay for lay in layouts.values()}
    tables = {name: recs for name, recs in body.records.items()}
    for name, spans in body.spans.items():
        lay = by_name[name]
        fields = [f for f in lay.dtype.names if f != "_id"]
        if lay.condition is None:
            tables[name] = _records_at(raw, lay.dtype, spans)[fields]
            continue
        ext = lay.condition[2]  # records with and without the conditional field: by field
        fields = fields + [ext.names[-1]]
        has = np.repeat(np.array([s[3] for s in spans], bool),
                        np.array([s[1] for s in spans], np.int64))
        out = np.zeros(len(has), dtype=np.dtype([(f, ext.fields[f][0]) for f in fields]))
        for rows, extended, dtype in ((~has, False, lay.dtype), (has, True, ext)):
            records = _records_at(raw, dtype, [s for s in spans if s[3] == extended])
            for f in fields:
                if f in dtype.names:
                    out[f][rows] = records[f]
        tables[name] = out
    return tables


def _records_at(raw, dtype, spans):
    """Copies of the ``dtype`` records of ``raw`` in ``spans`` ((position, records,
    stride, _)), in order: long runs joined as views of the file, short ones (a meta-task
    and its waits, an instance's usages: runs of a few records) taken at once from a view
    of a record at every byte."""
    if not spans:
        return np.zeros(0, dtype)
    pos, k, stride = (np.array(c, np.int64) for c in list(zip(*spans))[:3])
    if len(spans) * LONG_RUNS <= int(k.sum()):
        return np.concatenate([np.ndarray((n,), dtype, raw, p, (st,))
                               for p, n, st in zip(pos.tolist(), k.tolist(), stride.tolist())])
    first = np.cumsum(k) - k
    starts = np.repeat(pos - first * stride, k) + np.arange(int(k.sum())) * np.repeat(stride, k)
    every = np.ndarray((len(raw) - dtype.itemsize + 1,), np.dtype(("V", dtype.itemsize)), raw,
                       0, (1,))  # (a record without fields is copied whole, not field by field)
    return every[starts].view(dtype)


LONG_RUNS = 64  # (records a run, on average, from which a table's runs are joined as views)


_TIMES = ("create", "ready", "start", "stop")
# Record -> fields the model reads from it.  A table without them (a damaged preamble renamed
# or retyped one) is dropped with a warning instead of failing later.
REQUIRED_FIELDS = {
    "TaskKind": ("task_id", "name"), "TaskVariant": ("task_id", "variant_id", "name"),
    "MetaDesc": ("kind", "name"), "MapperCallDesc": ("kind", "name"),
    "RuntimeCallDesc": ("kind", "name"), "MapperName": ("mapper_id", "mapper_proc", "name"),
    "Provenance": ("provenance", "prov"), "MachineDesc": ("node_id",),
    "ZeroTime": ("zero_time",), "ProcDesc": ("proc_id", "kind"),
    "MemDesc": ("mem_id", "kind", "capacity"),
    "OperationInstance": ("op_id", "parent_id", "kind", "provenance"),
    "TaskInfo": ("op_id", "task_id", "variant_id", "proc_id", *_TIMES, "fevent"),
    "ImplicitTaskInfo": ("op_id", "task_id", "variant_id", "proc_id", *_TIMES, "fevent"),
    "GPUTaskInfo": ("op_id", "task_id", "variant_id", "proc_id", *_TIMES, "fevent",
                    "gpu_start", "gpu_stop"),
    "MetaInfo": ("op_id", "lg_id", "proc_id", *_TIMES, "fevent"),
    "MessageInfo": ("op_id", "lg_id", "proc_id", *_TIMES, "fevent"),
    "MapperCallInfo": ("mapper_id", "mapper_proc", "kind", "start", "stop", "proc_id",
                       "fevent"),
    "RuntimeCallInfo": ("kind", "start", "stop", "proc_id", "fevent"),
    "ApplicationCallInfo": ("provenance", "start", "stop", "proc_id", "fevent"),
    "ProfTaskInfo": ("proc_id", "op_id", "start", "stop"),
    "CopyInfo": ("op_id", "size", *_TIMES, "fevent"),
    "CopyInstInfo": ("src", "dst", "fevent"),
    "FillInfo": ("op_id", "size", *_TIMES, "fevent"),
    "FillInstInfo": ("dst", "fevent"),
    "PartitionInfo": ("op_id", "part_op", *_TIMES),
    "InstTimelineInfo": ("inst_id", "mem_id", "size", "op_id", "create", "ready", "destroy"),
    "TaskWaitInfo": ("op_id", "wait_start", "wait_ready", "wait_end"),
    "MetaWaitInfo": ("op_id", "lg_id", "wait_start", "wait_ready", "wait_end"),
    # the Realm event graph (the critical path)
    "EventMergerInfo": ("result", "fevent", "performed", "pre0", "pre1", "pre2", "pre3"),
    "CompletionQueueInfo": ("result", "fevent", "performed", "pre0", "pre1", "pre2", "pre3"),
    "EventTriggerInfo": ("result", "fevent", "precondition", "performed"),
    "EventPoisonInfo": ("result", "fevent", "performed"),
    "BarrierArrivalInfo": ("result", "fevent", "precondition", "performed"),
    "ReservationAcquireInfo": ("result", "fevent", "precondition", "performed"),
    "InstanceReadyInfo": ("result", "precondition", "inst_uid", "performed"),
    "InstanceRedistrictInfo": ("result", "precondition", "previous", "next", "performed"),
    "ExternalEventInfo": ("external", "fevent", "created", "trigger"),
}
_STRING_FIELDS = {"name", "prov"}


# Tables the model walks row by row (any layout will do); the others it reads as columns.
_ROW_TABLES = {"TaskKind", "TaskVariant", "MetaDesc", "MapperCallDesc", "RuntimeCallDesc",
               "MapperName", "Provenance", "ProcDesc", "MachineDesc"}


def check_tables(tables, seq=None):
    """Drop tables the model cannot use, and records with a time before the clock's zero
    (``seq``: their file positions go with them); return the warnings.

    Row tables become lists of dicts with ints and strings where the model expects them;
    column tables must be numeric structured arrays.
    """
    problems = []
    for name, need in REQUIRED_FIELDS.items():
        t = tables.get(name)
        if t is None or len(t) == 0:
            continue
        if name in _ROW_TABLES:
            if isinstance(t, np.ndarray):
                tables[name] = t = [dict(zip(t.dtype.names, row)) for row in t.tolist()]
            ok = all(all(f in r for f in need)
                     and all(isinstance(r[f], str) if f in _STRING_FIELDS
                             else isinstance(r[f], int) for f in need)
                     for r in t)
        else:
            ok = isinstance(t, np.ndarray) and all(
                f in t.dtype.names and t.dtype.fields[f][0].kind in "iu" for f in need)
        if not ok:
            problems.append(f"{name} records do not have the fields Legion writes "
                            f"({', '.join(need)}); damaged preamble? {len(t)} records ignored")
            del tables[name]
        elif name == "MachineDesc" and _machine_problem(t):
            problems.append(f"MachineDesc is damaged ({_machine_problem(t)}); the file's rank "
                            "is taken from its processors' ids")
            del tables[name]
        elif name not in _ROW_TABLES:
            problems += _drop_times_before_zero(tables, seq, name, need)
    return problems


# Fields the model reads as times.  Legion's clock counts from its zero (``timestamp_t``, a
# long long), so a time below it — a timestamp of 2^63 ns or more — is damage: with one, two
# times of a run lie further apart than an int64 holds (the critical path's time before the
# path, a lane's durations: OverflowError).  Dropped, every time is in [0, 2^63 - 1] and every
# difference of two fits.  (``PhysicalInstanceUsage.stop`` is -1 in honest logs; the model
# does not read it.)
TIME_FIELDS = frozenset({"create", "ready", "start", "stop", "gpu_start", "gpu_stop", "destroy",
                         "wait_start", "wait_ready", "wait_end", "performed", "created",
                         "trigger"})


def _drop_times_before_zero(tables, seq, name, need):
    """Drop ``name``'s records with a time below zero (as an int64: a field retyped unsigned
    by a damaged preamble too); the warning, or none.  A pass over each time column; a copy
    of the table only when something is dropped."""
    t = tables[name]
    cols = [t[f] for f in need if f in TIME_FIELDS and t.dtype.fields[f][0].itemsize == 8]
    if not any(int(c.min()) < 0 if c.dtype.kind == "i" else int(c.max()) >= 2**63
               for c in cols):
        return []
    keep = np.ones(len(t), bool)
    for c in cols:
        keep &= (c.astype(np.int64) if c.dtype.kind == "u" else c) >= 0
    tables[name] = t[keep]
    if seq is not None and name in seq and len(seq[name]) == len(keep):
        seq[name] = seq[name][keep]
    k = int(len(keep) - keep.sum())
    return [f"{k:,} {name} record{'s' if k > 1 else ''} with a time before the clock's zero "
            "(a timestamp of 2^63 ns or more: damage) ignored"]


MAX_NODES = 1 << 16  # Realm's node ids are 16 bits of a processor's or memory's id


def _machine_problem(rows):
    """What makes a machine description impossible (a node id or count beyond Realm's 16
    bits: 2^31 was an int32 overflow in 13 commands), or None."""
    r = rows[0]
    if not 0 <= r["node_id"] < MAX_NODES:
        return f"node id {r['node_id']}"
    n = r.get("num_nodes", 1)
    if isinstance(n, int) and not 0 <= n <= MAX_NODES:
        return f"{n} nodes"
    return None


def read_legion_log(path) -> LegionLog:
    return LegionProfReader(path).read()


# Bytes of a log's body read by ``read_head``: Legion writes the MachineDesc (and ZeroTime)
# first, so a few KB hold them.
HEAD_BODY_BYTES = 1 << 14
HEAD_MAX_PREAMBLE = 1 << 22


def read_head(path) -> LegionLog:
    """The header and first records of a log — its ``MachineDesc`` (which node wrote it, of how
    many) and ``ZeroTime`` — without reading the rest (a gzipped log is inflated only that
    far).  Tables of the records cut at the end are partial; ``warnings`` are left empty."""
    path = os.fspath(path)
    reader = LegionProfReader(path)
    try:
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
            f.seek(0)
            inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if gz else None
            raw, want = b"", HEAD_BODY_BYTES
            while True:
                chunk = f.read(GZIP_CHUNK)
                if inflate is not None and chunk:
                    try:
                        chunk = inflate.decompress(chunk)
                    except zlib.error:
                        chunk = b""
                raw += chunk
                end = raw.find(b"\n\n")
                if not chunk or (end >= 0 and len(raw) >= end + 2 + want) or \
                        len(raw) > HEAD_MAX_PREAMBLE:
                    break
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None
    version, legion_version, layouts, pos = reader.parse_header(raw)
    raw = raw[:pos + HEAD_BODY_BYTES]
    log = LegionLog(path, version, legion_version, layouts)
    reader._read_body(raw, pos, layouts, log)
    log.warnings = []
    return log
