"""Open whatever the user passed: Legion Prof logs (one per rank) or a bundle, into a TraceModel."""

from __future__ import annotations

import hashlib
import os
import stat
import sys

from .errors import ProfileError, ProfileWarning
from .legion_reader import MAGIC, LegionProfReader


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
    if head.startswith(MAGIC) or head[:2] == b"\x1f\x8b":
        return "legion"
    from .bundle import BUNDLE_MAGIC
    if head.startswith(BUNDLE_MAGIC):
        return "bundle"
    from .runtime_stream import STREAM_MAGIC
    if head.startswith(STREAM_MAGIC):
        return "runtime"
    try:
        head.decode("utf-8")
        return "text"
    except UnicodeDecodeError:
        return "unknown"


def _fingerprint(path, st):
    """Size and a hash of the first and last 64 KiB: equal for copies of one file."""
    h = hashlib.sha256(str(st.st_size).encode())
    with open(path, "rb") as f:
        h.update(f.read(1 << 16))
        if st.st_size > 1 << 17:
            f.seek(-(1 << 16), os.SEEK_END)
            h.update(f.read(1 << 16))
    return h.hexdigest()


def _distinct(paths):
    """The inputs without repeats (the same file twice, or two copies of it), and warnings."""
    seen, out, warnings = {}, [], []
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
        seen[key] = p
        out.append(p)
    return out, warnings


def _note(msg):
    print(msg, file=sys.stderr)


def load_profile(paths, progress=None, use_cache=False, stack=True):
    """Read every input and merge into one model.

    Unreadable inputs raise ProfileError only when *nothing* could be read; otherwise the
    problem goes into ``model.warnings`` and ``model.errors`` and the rest is shown.
    ``stack=False`` skips stacking lanes into rows (for statistics, diagnosis, comparisons);
    the result is not cached.
    """
    from .model_builder import build_model
    paths = [os.fspath(p) for p in paths]
    if use_cache:
        from .cache import load_cached
        cached = load_cached(paths, note=_note)
        if cached is not None:
            return cached.evolve(sources=paths, errors=[])
    logs, streams, texts, errors, warnings = [], [], [], [], []
    bundles = []
    paths, dup_warnings = _distinct(paths)
    warnings.extend(dup_warnings)
    for i, path in enumerate(paths):
        if progress:
            progress(i, len(paths), f"reading {os.path.basename(path)}")
        try:
            kind = sniff(path)
            if kind == "legion":
                log = LegionProfReader(path).read()
                logs.append(log)
                warnings.extend(log.warnings)
            elif kind == "bundle":
                bundles.append(path)
            elif kind == "runtime":
                from .runtime_stream import read_runtime_stream
                s = read_runtime_stream(path)
                streams.append(s)
                warnings.extend(s.warnings)
            elif kind == "text":
                texts.append(path)
            else:
                raise ProfileError(path, "not a Legion Prof log, a legate_prof bundle or a "
                                         "runtime event stream")
        except ProfileError as e:
            errors.append(e)
    if bundles:
        if len(bundles) > 1 or logs or streams:
            errors.append(ProfileError(bundles[1] if len(bundles) > 1 else bundles[0],
                                       "a bundle must be opened on its own"))
        from .bundle import read_bundle
        model = read_bundle(bundles[0])
    elif not logs and not streams:
        if not errors:
            if texts:
                errors.append(ProfileError(texts[0], "not a Legion Prof log (a text file; pass legate's console output with --log)"))
            else:
                raise ProfileError("<none>", "no input files")
        raise errors[0]
    else:
        if progress:
            progress(len(paths), len(paths), "building timeline")
        model = build_model(logs, warnings=[str(w) for w in warnings], streams=streams,
                            stack=stack)
    from .oom_report import attach_oom_report
    for t in texts:
        try:
            model, _ = attach_oom_report(model, t)
        except ProfileError as e:
            errors.append(e)
    model = model.evolve(sources=paths, errors=[str(e) for e in errors])
    if use_cache and stack and not errors and not bundles:
        from .cache import store_cached
        try:
            store_cached(model, paths, note=_note)
        except (OSError, ProfileError) as e:
            _note(f"legate_prof: note: could not cache the built timeline ({e})")
    return model


__all__ = ["load_profile", "sniff", "ProfileError", "ProfileWarning"]
