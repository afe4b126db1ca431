"""One-file msgpack bundle of a merged TraceModel, and the cache ``view`` keeps of raw logs.

A bundle is ``BUNDLE_MAGIC`` followed by one msgpack map.  Numpy columns are stored as raw
bytes with their dtype and reopened with ``numpy.frombuffer`` (no per-item decoding), so a
10M-item model reopens in about the time it takes to read the file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import msgpack
import numpy as np

from .errors import ProfileError
from .intervals import StepIntegral

BUNDLE_MAGIC = b"LPBUNDLE"
FORMAT_VERSION = 1


def _pack_array(a):
    a = np.ascontiguousarray(a)
    return {"__nd__": True, "dtype": a.dtype.str, "shape": list(a.shape), "data": a.tobytes()}


def _pack(obj):
    if isinstance(obj, np.ndarray):
        return _pack_array(obj)
    if isinstance(obj, dict):
        return {str(k) if not isinstance(k, (str, int)) else k: _pack(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_pack(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    return obj


def _unpack(obj):
    if isinstance(obj, dict):
        if obj.get("__nd__"):
            return np.frombuffer(obj["data"], dtype=np.dtype(obj["dtype"])).reshape(obj["shape"])
        return {k: _unpack(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_unpack(v) for v in obj]
    return obj


def write_bundle(model, path):
    """Write atomically (temp file + rename) so a reader never sees half a bundle."""
    steps = [{"rank": r, "group": g, "t": s.t, "integral": s.integral,
              "denominator": s.denominator} for (r, g), s in model.utilization_steps.items()]
    extra = {"busy_ns": [[r, g, v] for (r, g), v in model.extra.get("busy_ns", {}).items()],
             "variants": [[n, g, v] for (n, g), v in
                          model.extra.get("variant_by_name_group", {}).items()]}
    if "runtime_end_ns" in model.extra:
        extra["runtime_end_ns"] = model.extra["runtime_end_ns"]
    doc = {
        "version": FORMAT_VERSION,
        "items": model.items, "lanes": model.lanes, "names": model.names, "ops": model.ops,
        "provenances": model.provenances, "waits": model.waits, "transfers": model.transfers,
        "ranks": model.ranks, "procs": model.procs, "mems": model.mems, "steps": steps,
        "warnings": [str(w) for w in model.warnings], "sources": list(model.sources),
        "markers": model.markers, "extra": extra,
    }
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(BUNDLE_MAGIC)
            msgpack.pack(_pack(doc), f, use_bin_type=True)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a bundle is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return str(path)


def read_bundle(path):
    from .trace_model import TraceModel
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None
    if not data.startswith(BUNDLE_MAGIC):
        raise ProfileError(path, "not a legate_prof bundle")
    try:
        doc = msgpack.unpackb(memoryview(data)[len(BUNDLE_MAGIC):], raw=False,
                              strict_map_key=False)
    except (ValueError, msgpack.UnpackException) as e:
        raise ProfileError(path, f"damaged bundle ({e.__class__.__name__}); convert again") from None
    if doc.get("version") != FORMAT_VERSION:
        raise ProfileError(path, f"bundle format {doc.get('version')} is not supported; "
                                 "convert the .prof files again")
    d = _unpack(doc)
    model = TraceModel(items=d["items"], lanes=d["lanes"], names=d["names"], ops=d["ops"],
                       provenances=d["provenances"], waits=d["waits"],
                       transfers=d["transfers"], ranks=d["ranks"], procs=d["procs"],
                       mems=d["mems"], warnings=d["warnings"], sources=d["sources"],
                       markers=d["markers"])
    model.utilization_steps = {(s["rank"], s["group"]): StepIntegral(s["t"], s["integral"],
                                                                     s["denominator"])
                               for s in d["steps"]}
    ex = d["extra"]
    model.extra["busy_ns"] = {(r, g): v for r, g, v in ex.get("busy_ns", [])}
    model.extra["variant_by_name_group"] = {(n, g): v for n, g, v in ex.get("variants", [])}
    if "runtime_end_ns" in ex:
        model.extra["runtime_end_ns"] = ex["runtime_end_ns"]
    return model


# ---- cache of raw logs for `view` ---------------------------------------------------------
def cache_key(paths):
    h = hashlib.sha256(f"v{FORMAT_VERSION}".encode())
    for p in sorted(os.path.abspath(p) for p in paths):
        st = os.stat(p)
        h.update(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    from . import __version__
    h.update(__version__.encode())
    return h.hexdigest()[:24]


def cache_locations(paths):
    """Beside the data first, else the user's cache dir."""
    key = cache_key(paths)
    beside = Path(os.path.dirname(os.path.abspath(paths[0]))) / ".legate_prof_cache"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    user = Path(base) / "legate_prof" / "bundles"
    return [d / f"{key}.lpbundle" for d in (beside, user)]


def load_cached(paths):
    """A cached model of these raw files, or None (missing, stale or unreadable)."""
    for c in cache_locations(paths):
        if c.exists():
            try:
                return read_bundle(c)
            except ProfileError:
                try:
                    c.unlink()
                except OSError:
                    pass
    return None


def store_cached(model, paths):
    for c in cache_locations(paths):
        try:
            c.parent.mkdir(parents=True, exist_ok=True)
            return write_bundle(model, c)
        except OSError:
            continue
    return None
