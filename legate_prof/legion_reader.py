"""Reader for Legion Prof binary logs (``legate_N.prof``), driven by the file's own preamble.

Record ids change between Legion versions, so every record type is looked up by the name the
preamble gives it.  Fixed-size records come in long runs of one type (Legion flushes its buffers
kind by kind), and each run is decoded in one ``numpy.frombuffer`` call with a packed structured
dtype; only descriptor records that carry strings, points or uuids are decoded one by one.
"""

from __future__ import annotations

import gzip
import mmap
import os
import re
import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

from .errors import ProfileError, ProfileWarning

MAGIC = b"FileType: BinaryLegionProf v: "

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

_PREAMBLE_LINE = re.compile(r"^(\w+)\s*\{id:(\d+)((?:,\s*[^,}]+)*)\}\s*$")


def _scalar_dtype(type_name: str, size: int) -> str:
    if type_name == "bool" and size == 1:
        return "u1"
    if size == 4:
        return "<i4" if type_name in _SIGNED_4 else "<u4"
    if size == 8:
        return "<i8" if type_name in _SIGNED_8 else "<u8"
    if size in (1, 2):
        return {1: "u1", 2: "<u2"}[size]
    raise ValueError(f"unsupported field size {size} for type {type_name!r}")


@dataclass
class RecordLayout:
    """How one record type is laid out on disk, built from its preamble line."""

    name: str
    rid: int
    fields: list  # [(field, type, size)]
    dtype: np.dtype | None = None  # packed, with leading '_id', when every field is fixed-size
    condition: tuple | None = None  # (field, value, extended dtype) for a conditional tail field

    @property
    def fixed(self):
        return self.dtype is not None

    def condition_field_name(self):
        return _cond_field_name(self)


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
        base = [("_id", "<i4")] + [(f, _scalar_dtype(t, s)) for f, t, s in present]
        layout.dtype = np.dtype(base)
        if layout.condition:
            _, _, fname, ftype, size = layout.condition
            ext = np.dtype(base + [(fname, _scalar_dtype(ftype, size))])
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
    warnings: list = field(default_factory=list)
    record_count: int = 0
    byte_size: int = 0

    def table(self, name):
        return self.tables.get(name, ())

    def count(self, name):
        return len(self.tables.get(name, ()))


class LegionProfReader:
    """Reads one Legion Prof binary log; tolerant of version drift and truncation."""

    def __init__(self, path):
        self.path = os.fspath(path)

    # -- bytes -----------------------------------------------------------------------------
    def _load_bytes(self):
        try:
            with open(self.path, "rb") as f:
                head = f.read(2)
                if head == b"\x1f\x8b":
                    f.seek(0)
                    return self._gunzip(f.read())
                f.seek(0)
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    raise ProfileError(self.path, "empty file, not a Legion Prof log")
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), None
        except OSError as e:
            raise ProfileError(self.path, e.strerror or str(e)) from None

    def _gunzip(self, data):
        try:
            return gzip.decompress(data), None
        except (OSError, EOFError, zlib.error):
            # A truncated gzip stream: keep what inflates.
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                out = d.decompress(data)
            except zlib.error as e:
                raise ProfileError(self.path, f"corrupt gzip data ({e})") from None
            return out, "gzip stream is truncated; reading what was decompressed"

    # -- header and preamble ---------------------------------------------------------------
    def _parse_header(self, raw):
        if raw[: len(MAGIC)] != MAGIC:
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
        layouts = {}
        for line in bytes(raw[pos:end]).decode("utf-8", "replace").split("\n"):
            if not line.strip():
                continue
            m = _PREAMBLE_LINE.match(line.strip())
            if not m:
                raise ProfileError(self.path, f"malformed preamble line: {line[:80]!r}")
            name, rid, rest = m.group(1), int(m.group(2)), m.group(3)
            fields = []
            for part in rest.split(","):
                part = part.strip()
                if not part:
                    continue
                fname, ftype, size = part.split(":")
                fields.append((fname.strip(), ftype.strip(), int(size)))
            layouts[rid] = _build_layout(name, rid, fields)
        return version, legion_version, layouts, end + 2

    # -- body ------------------------------------------------------------------------------
    def read(self) -> LegionLog:
        raw, gz_warning = self._load_bytes()
        version, legion_version, layouts, pos = self._parse_header(raw)
        log = LegionLog(self.path, version, legion_version, layouts, byte_size=len(raw))
        if gz_warning:
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
        n = len(raw)
        parts = {}  # name -> [[tag, data]] in file order; tag: arr | bytes | ext | var
        state = {"max_dim": 3, "uuid_size": 16}
        id_bytes = {rid: struct.pack("<i", rid) for rid in layouts}
        count = 0

        def add(name, tag, data):
            lst = parts.setdefault(name, [])
            if tag != "arr" and lst and lst[-1][0] == tag:
                lst[-1][1].append(data)
            else:
                lst.append([tag, data if tag == "arr" else [data]])

        while pos < n:
            if pos + 4 > n:
                log.warnings.append(ProfileWarning(
                    self.path, f"file ends inside a record at byte {pos} (truncated); "
                               f"kept {count} records"))
                break
            rid = int.from_bytes(raw[pos:pos + 4], "little", signed=True)
            layout = layouts.get(rid)
            if layout is None:
                log.warnings.append(ProfileWarning(
                    self.path, f"unknown record id {rid} at byte {pos} (not in the preamble); "
                               f"stopped reading, kept {count} records"))
                break
            if layout.fixed:
                size = layout.dtype.itemsize
                avail = (n - pos) // size
                if avail == 0:
                    log.warnings.append(ProfileWarning(
                        self.path, f"last {layout.name} record is truncated at byte {pos}; "
                                   f"kept {count} records"))
                    break
                nxt = pos + size
                if avail == 1 or raw[nxt:nxt + 4] != id_bytes[rid]:
                    k = 1
                else:
                    k = _run_length(raw, pos, size, rid, avail)
                if layout.condition is not None:
                    try:
                        k, extended = self._conditional_run(raw, pos, layout, k, n)
                    except _Truncated:
                        log.warnings.append(ProfileWarning(
                            self.path, f"last {layout.name} record is truncated at byte {pos}; "
                                       f"kept {count} records"))
                        break
                    if extended is not None:
                        add(layout.name, "ext", extended)
                        pos += layout.condition[2].itemsize
                        count += 1
                        continue
                if k == 1:
                    add(layout.name, "bytes", bytes(raw[pos:pos + size]))
                else:
                    add(layout.name, "arr",
                        np.frombuffer(raw, dtype=layout.dtype, count=k, offset=pos))
                pos += k * size
                count += k
            else:
                try:
                    rec, pos = _decode_variable(raw, pos + 4, layout, state)
                except _Truncated:
                    log.warnings.append(ProfileWarning(
                        self.path, f"last {layout.name} record is truncated at byte {pos}; "
                                   f"kept {count} records"))
                    break
                add(layout.name, "var", rec)
                count += 1
        log.record_count = count
        log.tables = _assemble(layouts, parts)

    @staticmethod
    def _conditional_run(raw, pos, layout, k, n):
        """Cut a run where the conditional field appears; decode that record alone."""
        cfield, cvalue, ext = layout.condition
        arr = np.frombuffer(raw, dtype=layout.dtype, count=k, offset=pos)
        hit = np.flatnonzero(arr[cfield] == cvalue)
        if hit.size == 0:
            return k, None
        if hit[0] > 0:
            return int(hit[0]), None
        if pos + ext.itemsize > n:
            raise _Truncated
        return 0, bytes(raw[pos:pos + ext.itemsize])


class _Truncated(Exception):
    pass


def _run_length(raw, pos, size, rid, avail):
    """Number of consecutive records of id ``rid`` of ``size`` bytes starting at ``pos``."""
    done = 1
    step = 64
    while done < avail:
        cnt = min(step, avail - done)
        ids = np.ndarray((cnt,), dtype="<i4", buffer=raw, offset=pos + done * size,
                         strides=(size,))
        bad = np.flatnonzero(ids != rid)
        if bad.size:
            return done + int(bad[0])
        done += cnt
        step *= 4
    return done


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
            rec[fname] = bytes(raw[pos:end]).decode("utf-8", "replace")
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
        val = np.frombuffer(raw, dtype=_scalar_dtype(ftype, size), count=1, offset=pos)[0]
        val = bool(val) if ftype == "bool" else int(val)
        rec[fname] = val
        pos += size
        if ftype == "maxdim":
            state["max_dim"] = val
        elif ftype == "uuid_size":
            state["uuid_size"] = val
    return rec, pos


def _cond_field_name(layout):
    for (rname, fname) in CONDITIONAL_FIELDS:
        if rname == layout.name:
            return fname
    return None


def _assemble(layouts, parts):
    """One table per record name, rows in file order, without the record id column."""
    by_name = {lay.name: lay for lay in layouts.values()}
    tables = {}
    for name, plist in parts.items():
        lay = by_name[name]
        if not lay.fixed:
            tables[name] = [rec for _, recs in plist for rec in recs]
            continue
        fields = [f for f in lay.dtype.names if f != "_id"]
        if lay.condition is not None:
            ext = lay.condition[2]
            fields = fields + [ext.names[-1]]
            target = np.dtype([(f, ext.fields[f][0]) for f in fields])
        else:
            target = np.dtype([(f, lay.dtype.fields[f][0]) for f in fields])
        arrays = []
        for tag, data in plist:
            if tag == "arr":
                arrays.append(data)
            elif tag == "bytes":
                arrays.append(np.frombuffer(b"".join(data), dtype=lay.dtype))
            else:  # "ext": records carrying the conditional field
                arrays.append(np.frombuffer(b"".join(data), dtype=lay.condition[2]))
        total = sum(len(a) for a in arrays)
        out = np.zeros(total, dtype=target)
        at = 0
        for a in arrays:
            for f in fields:
                if f in a.dtype.names:
                    out[f][at:at + len(a)] = a[f]
            at += len(a)
        tables[name] = out
    return tables


def _drop_id(arr, target):
    out = np.empty(len(arr), dtype=target)
    for f in target.names:
        out[f] = arr[f]
    return out


def read_legion_log(path) -> LegionLog:
    return LegionProfReader(path).read()
