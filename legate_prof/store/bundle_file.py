"""The bundle file format: one file holding a model (``convert``; the entries of ``cache.py``;
the ranks workers hand over).

Layout: ``BUNDLE_MAGIC``, a little-endian u64 header length, a msgpack header (everything but
the numpy columns, which it describes by dtype, shape and offset), then the raw column bytes,
each at a 64-byte aligned offset.  Reopening maps the file and makes each column a read-only
``numpy.frombuffer`` view of the map: the time and memory it takes do not grow with the items
until the viewer touches them.
"""

from __future__ import annotations

import contextlib

import math
import mmap
import os
import stat
import struct
from collections.abc import Mapping
from pathlib import Path

import msgpack
import numpy as np

from legate_prof.store.bundle_check import BundleDamage, check_bundle
from legate_prof.errors import ProfileError
from legate_prof.file_signatures import BUNDLE as BUNDLE_MAGIC
from legate_prof.file_signatures import BUNDLE_VERSION as FORMAT_VERSION
from legate_prof.model.intervals import StepIntegral
from legate_prof.model.kinds import ANY_ACTIVE_GROUPS
from legate_prof.read.msgpack_budget import OverBudget, header_budget

ALIGN = 64


class WriteStopped(Exception):
    """A write given up midway because its ``stop()`` said so (the viewer closed while its
    cache entry was being written): its temporary file is gone, nothing else was written."""


def check_stop(stop):
    """Raise ``WriteStopped`` when ``stop`` (None, or a function) says the write should end."""
    if stop is not None and stop():
        raise WriteStopped("the write was stopped")


class Deferred:
    """A column made in pieces as it is written: ``[(length, make)]``, each ``make()`` giving
    that many values.  An unstacked model is stored stacked, and ranks as one bundle, without
    a second copy of their columns."""

    def __init__(self, dtype, pieces):
        self.dtype, self.pieces = np.dtype(dtype), pieces
        self.shape = (sum(n for n, _ in pieces),)
        self.nbytes = self.dtype.itemsize * self.shape[0]

    @classmethod
    def gathered(cls, a, order):
        """``a[order]``, made when written."""
        return cls(a.dtype, [(len(order), lambda: a[order])])

    def chunks(self):
        for n, make in self.pieces:
            a = np.ascontiguousarray(make(), dtype=self.dtype)
            if a.shape != (n,):
                raise ValueError("a deferred column piece has the wrong length")
            yield a


class _Columns:
    """Collects numpy arrays while the header is built; writes them after it."""

    def __init__(self):
        self.arrays = []
        self.offset = 0

    def ref(self, a):
        a = a if isinstance(a, Deferred) else np.ascontiguousarray(a)
        self.offset = -(-self.offset // ALIGN) * ALIGN
        ref = {"__nd__": True, "dtype": a.dtype.str, "shape": list(a.shape),
               "offset": self.offset}
        self.arrays.append((self.offset, a))
        self.offset += a.nbytes
        return ref


def _pack(obj, cols):
    if isinstance(obj, (np.ndarray, Deferred)):
        return cols.ref(obj)
    if isinstance(obj, Mapping):  # dicts, and lazily made tables (trace_model.LazyTable)
        return {k if isinstance(k, (str, int)) else str(k): _pack(v, cols) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_pack(v, cols) for v in obj]
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    return obj


_COLUMN_KINDS = "iufb"  # numeric columns only: no objects, strings or structured dtypes


def _column(ref, buf, base):
    """A read-only view of one column, after checking its reference fits the file."""
    try:
        dt = np.dtype(ref["dtype"])
        shape = [int(x) for x in ref["shape"]]
        offset = int(ref["offset"])
    except (KeyError, TypeError, ValueError, OverflowError, SyntaxError):  # numpy parses dtypes
        raise ValueError("a column reference is damaged") from None
    if dt.kind not in _COLUMN_KINDS or dt.fields or len(shape) > 2 or min(shape + [0]) < 0:
        raise ValueError("a column reference is damaged")
    count = math.prod(shape)  # exact Python ints: no overflow on a damaged shape
    if offset < 0 or base + offset + count * dt.itemsize > len(buf):
        raise ValueError("a column runs past the end of the file")
    return np.frombuffer(buf, dtype=dt, count=count, offset=base + offset).reshape(shape)


def _step_doc(step, indexes):
    """A step function; with ``indexes``, the coarse index of a large one too (making it
    reads every page of ``t``, which a first frame otherwise leaves cold)."""
    doc = {"t": step.t, "integral": step.integral, "denominator": step.denominator}
    if indexes and len(step.t) >= StepIntegral.COARSE_MIN:
        doc["coarse"] = step.coarse_index()
        step.adopt_coarse_index(doc["coarse"])
        sampled = step.sampled_integral()
        if sampled is not None:
            doc["sampled_cell"], doc["sampled_first"], doc["sampled"] = sampled
    return doc


def _step_of(doc):
    step = StepIntegral(doc["t"], doc["integral"], doc["denominator"], mapped=True)
    if doc.get("coarse") is not None:
        step.adopt_coarse_index(doc["coarse"])
    if doc.get("sampled") is not None:
        step.adopt_sampled_integral(doc["sampled_cell"], doc["sampled_first"], doc["sampled"])
    return step


class _SumOnWrite:
    """A group's all-ranks step function as ``Deferred`` columns: summed when the first of
    them is written (``StepIntegral.sum(distinct=False)``: its length is known before), each
    column dropped once written."""

    def __init__(self, steps):
        self.steps, self.n = steps, StepIntegral.sum_length(steps)
        self.made = None

    def _take(self, key, keys):
        if self.made is None:
            st = StepIntegral.sum(self.steps, distinct=False)
            self.made = {"t": st.t, "integral": st.integral}
            if "coarse" in keys:
                self.made["coarse"] = st.coarse_index()
                st.adopt_coarse_index(self.made["coarse"])
            if "sampled" in keys:
                self.made["sampled"] = st.sampled_integral()[2]
        return self.made.pop(key)

    def doc(self, indexes):
        keys = ("t", "integral", "coarse") if indexes and self.n >= StepIntegral.COARSE_MIN \
            else ("t", "integral")
        summed = [s for s in self.steps if len(s.t) >= 2]
        t_dtype = np.result_type(*[s.t.dtype for s in summed] or [np.float64])
        lengths = {"t": self.n, "integral": self.n, "coarse": -(-self.n // StepIntegral.BLOCK)}
        dtypes = {"t": t_dtype, "integral": np.float64, "coarse": t_dtype, "sampled": np.float64}
        doc = {}
        if "coarse" in keys and self.n >= StepIntegral.SAMPLED_MIN:  # (its cells known before)
            keys += ("sampled",)
            cell, doc["sampled_first"], lengths["sampled"] = StepIntegral.sampled_cells(
                min(s.t[0] for s in summed), max(s.t[-1] for s in summed))
            doc["sampled_cell"] = cell
        doc.update({k: Deferred(dtypes[k], [(lengths[k], lambda k=k: self._take(k, keys))])
                    for k in keys})
        doc["denominator"] = sum(s.denominator for s in self.steps)
        return doc


def write_tables(model, path, items, waits, transfers, ops, index, indexes=True, events=None,
                 stop=None, mode=0o666, handover=False):
    """Write ``model``'s small tables (lanes, strings, steps, ranks…) with these per-item
    tables (arrays or ``Deferred`` columns) and ``index``, stacked when indexed.  ``stop``
    (a function): asked between columns' pieces; when it says so, the write ends with
    ``WriteStopped`` and its temporary file is removed.  ``handover``: ``path`` is in a
    hand-over folder of this run's own (``load.rank_workers``), read only once the writer
    says it is done and removed whole: written straight, without the temporary and its
    record that an output needs (each of those swept the folder: at 1,000 ranks, a pass over
    the folder's 2,000 files for each of them)."""
    steps = [{"rank": r, "group": g, **_step_doc(s, indexes)}
             for (r, g), s in model.utilization_steps.items()]
    extra = {"busy_ns": [[r, g, v] for (r, g), v in model.busy_ns.items()],
             "variants": [[n, g, v] for (n, g), v in model.variant_by_name_group.items()],
             "extent": list(model.extent())}
    if model.runtime_end_ns is not None:
        extra["runtime_end_ns"] = model.runtime_end_ns
    if model.line_text:
        extra["line_text"] = dict(model.line_text)
    # the all-ranks step functions (a frame reads one, not every rank's), each summed as it
    # is written and let go after: together they are as big as the ranks' own
    by_group = {}
    for (_, g), st in model.utilization_steps.items():
        by_group.setdefault(g, []).append(st)
    all_steps = [{"group": g, **(_step_doc(StepIntegral.any_active(steps), indexes)
                                 if g in ANY_ACTIVE_GROUPS
                                 else _SumOnWrite(steps).doc(indexes))}
                 for g, steps in sorted(by_group.items()) if len(steps) > 1]
    doc = {
        "all_steps": all_steps,
        "index": index, "stacked": bool(model.stacked or indexes),
        "version": FORMAT_VERSION,
        "items": items, "lanes": model.lanes, "names": model.names, "ops": ops,
        "provenances": model.provenances, "waits": waits, "transfers": transfers,
        "ranks": model.ranks, "procs": model.procs, "mems": model.mems, "steps": steps,
        "warnings": [str(w) for w in model.warnings], "sources": list(model.sources),
        "source_sizes": _source_sizes(model.sources),
        "markers": model.markers, "extra": extra,
        "events": model.events if events is None else events,
    }
    cols = _Columns()
    # (a file name that is not UTF-8 — a tarball from another locale — kept as its bytes)
    header = msgpack.packb(_pack(doc, cols), use_bin_type=True, unicode_errors="surrogateescape")
    start = -(-(len(BUNDLE_MAGIC) + 8 + len(header)) // ALIGN) * ALIGN
    path = Path(path)
    check_stop(stop)
    from legate_prof.output_file import atomic_output  # (writing alone: a read needs none)
    with (contextlib.nullcontext(str(path)) if handover else atomic_output(path, mode)) \
            as tmp, open(tmp, "wb") as f:
        f.write(BUNDLE_MAGIC + struct.pack("<Q", len(header)) + header)
        for off, a in cols.arrays:
            f.seek(start + off)
            for chunk in (a.chunks() if isinstance(a, Deferred) else [a]):
                check_stop(stop)
                f.write(memoryview(chunk).cast("B") if chunk.nbytes else b"")
        f.truncate(start + cols.offset)
    return str(path)


def room_for_open_files(n):
    """Whether ``n`` more files can stay open at once — a mapped bundle keeps its file open —,
    raising this process's soft limit toward the hard one where that makes room (it is 1024 on
    many Linux desktops, 256 on macOS).  Where there is no room, callers merge instead, which
    keeps one file open at a time."""
    try:
        import resource
    except ImportError:  # Windows: no such limit
        return True
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = n + 256  # and what else the process has open
    if soft == resource.RLIM_INFINITY or soft >= need:
        return True
    if hard != resource.RLIM_INFINITY and hard < need:
        return False
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    except (ValueError, OSError):
        return False
    return True


def _source_sizes(sources):
    """[file name, size] of each input as it was converted: a folder's logs are later
    checked against them (``bundle_sources``), times alone miss a log copied in with an
    older time."""
    out = []
    for src in sources:
        try:
            out.append([os.path.basename(src), os.stat(src).st_size])
        except (OSError, TypeError, ValueError):
            continue
    return out


def unpack_header(data, columns=None):
    """A bundle's msgpack header, decoded within the budget its size allows
    (``read.msgpack_budget``): a header of empty maps cost 140 times its size.  Words that
    are not UTF-8 (a damaged header) come back as the logs' reader decodes them, U+FFFD for
    each byte that is not text, but paths as the file system names them (``PATH_FIELDS``).
    ``columns`` ((the mapped file, where its columns begin)): each column's reference comes
    back as a read-only view of the column, made as it is decoded (a second walk of the
    header made them: 0.1 s of a cached 1,000 ranks' 168,000 nodes); a reference that is
    damaged raises ``BundleDamage``."""
    try:
        return _unpacked(data, "strict", columns)
    except UnicodeDecodeError:
        return _texts_mended(_unpacked(data, "surrogateescape", columns))


def _unpacked(data, unicode_errors, columns=None):
    budget = header_budget(len(data))
    hooks = budget.hooks()
    if columns is not None:
        spend, (buf, base) = hooks["object_hook"], columns

        def object_hook(obj):
            spend(obj)
            if not obj.get("__nd__"):
                return obj
            try:
                return _column(obj, buf, base)
            except ValueError as e:  # (msgpack's own errors are ValueErrors too)
                raise BundleDamage(str(e)) from None
        hooks["object_hook"] = object_hook
    return msgpack.unpackb(data, raw=False, strict_map_key=False, **hooks,
                           unicode_errors=unicode_errors, **budget.lengths())


# A header's fields whose words are file paths: a name the file system allows, kept as Python
# keeps one (bytes that are not UTF-8 as lone surrogates), to be found on disk again.
PATH_FIELDS = ("sources", "source_sizes")


def _texts_mended(doc):
    """``doc`` with each word's lone surrogates (its bytes that were not UTF-8) shown as
    U+FFFD, but in ``PATH_FIELDS``: a surrogate stops Qt's text, a colour's hash and every
    file written as UTF-8 (a fuzzed bundle's task name stopped ``report`` and
    ``screenshot`` with a traceback)."""
    def mended(x):
        if isinstance(x, str):
            return x.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        if isinstance(x, list):
            return [mended(v) for v in x]
        if isinstance(x, dict):
            return {mended(k): mended(v) for k, v in x.items()}
        return x
    if not isinstance(doc, dict):
        return mended(doc)
    return {k: (v if k in PATH_FIELDS else mended(v)) for k, v in doc.items()}


def bundle_sources(path):
    """{file name: size} of the inputs a bundle was converted from, read from its header
    only; None where the bundle does not say (written before it did) or cannot be read."""
    try:
        # (without blocking, and regular files only: a FIFO named so beside the logs hung
        # every command on the folder)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        with os.fdopen(fd, "rb") as f:
            head = f.read(len(BUNDLE_MAGIC) + 8)
            if len(head) < len(BUNDLE_MAGIC) + 8 or not head.startswith(BUNDLE_MAGIC):
                return None
            (hlen,) = struct.unpack_from("<Q", head, len(BUNDLE_MAGIC))
            if hlen > os.fstat(f.fileno()).st_size:
                return None
            doc = unpack_header(f.read(hlen))
        sizes = doc.get("source_sizes")
        return {str(n): int(z) for n, z in sizes} if isinstance(sizes, list) else None
    except (OSError, ValueError, TypeError, AttributeError, msgpack.UnpackException):
        return None


def read_bundle(path, check=True):
    """Map a bundle as a model; ``check=False`` only for a bundle this process just checked
    or a worker of ours just wrote; ``check="structure"`` for one whose values were checked
    and that has not changed since (``cache.py``): nothing that grows with the items."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < len(BUNDLE_MAGIC) + 8:
                raise ProfileError(path, "not a legate_prof bundle (too short)")
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None
    if buf[: len(BUNDLE_MAGIC)] != BUNDLE_MAGIC:
        raise ProfileError(path, "not a legate_prof bundle")
    (hlen,) = struct.unpack_from("<Q", buf, len(BUNDLE_MAGIC))
    if hlen > size:
        raise ProfileError(path, "damaged bundle (header longer than the file); convert again")
    hstart = len(BUNDLE_MAGIC) + 8
    base = -(-(hstart + hlen) // ALIGN) * ALIGN
    try:
        if hstart + hlen > size:
            raise ValueError("header runs past the end")
        d = unpack_header(buf[hstart:hstart + hlen], columns=(buf, base))
    except BundleDamage as e:  # a column past the end, its reference damaged
        raise ProfileError(path, _unsupported(buf[hstart:hstart + hlen])
                           or f"damaged bundle ({e}); convert again") from None
    except OverBudget as e:
        raise ProfileError(path, f"damaged bundle (its header holds {e}: more than its "
                                 f"{hlen:,} bytes can honestly hold); convert again") from None
    except (ValueError, TypeError, msgpack.UnpackException) as e:  # TypeError: unhashable key
        why = (f"a list or map longer than its header's {hlen:,} bytes can hold"
               if "exceeds max_" in str(e) else e.__class__.__name__)
        raise ProfileError(path, f"damaged bundle ({why}); convert again") from None
    if not isinstance(d, dict) or d.get("version") != FORMAT_VERSION:
        raise ProfileError(path, _format_word(d))
    try:
        if check:
            check_bundle(d, values=check != "structure")
        return _model_of(d)
    except (ValueError, BundleDamage) as e:  # a column past the end, a field damaged
        raise ProfileError(path, f"damaged bundle ({e}); convert again") from None


def _format_word(doc):
    return (f"bundle format {doc.get('version') if isinstance(doc, dict) else '?'} is not "
            "supported; convert the .prof files again")


def _unsupported(header):
    """Why a header whose columns could not be made is refused, where its format is not
    this one's (its columns may be laid out otherwise): else None."""
    try:
        doc = unpack_header(header)
    except (ValueError, TypeError, msgpack.UnpackException):
        return None
    return None if isinstance(doc, dict) and doc.get("version") == FORMAT_VERSION \
        else _format_word(doc)


def _model_of(d):
    from legate_prof.model.trace_model import TraceModel
    ex = d["extra"]
    model = TraceModel(
        items=d["items"], lanes=d["lanes"], names=d["names"], ops=d["ops"],
        provenances=d["provenances"], waits=d["waits"], transfers=d["transfers"],
        ranks=d["ranks"], procs=d["procs"], mems=d["mems"], warnings=d["warnings"],
        sources=d["sources"], markers=d["markers"],
        utilization_steps={(s["rank"], s["group"]): _step_of(s) for s in d["steps"]},
        busy_ns={(r, g): v for r, g, v in ex.get("busy_ns", [])},
        variant_by_name_group={(n, g): v for n, g, v in ex.get("variants", [])},
        runtime_end_ns=ex.get("runtime_end_ns"), stacked=d.get("stacked", True),
        line_text=ex.get("line_text", {}), events=d["events"])
    if d["index"] is not None:
        model.adopt_indexes(
            d["index"]["sub_offset"], d["index"]["sub_bounds"], d["index"]["dur_perm"],
            {s["group"]: _step_of(s) for s in d["all_steps"]})
    if ex.get("extent") is not None:
        model.adopt_extent(ex["extent"])
    return model
