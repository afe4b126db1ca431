"""Open whatever the user passed: Legion Prof logs (one per rank) or a bundle, into a TraceModel."""

from __future__ import annotations

import os

from .errors import ProfileError, ProfileWarning
from .legion_reader import MAGIC, LegionProfReader


def sniff(path) -> str:
    """'legion', 'bundle', 'runtime', 'text' or 'unknown' from a file's first bytes."""
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


def load_profile(paths, progress=None, use_cache=False):
    """Read every input and merge into one model.

    Unreadable inputs raise ProfileError only when *nothing* could be read; otherwise the
    problem goes into ``model.warnings`` and ``model.errors`` and the rest is shown.
    """
    from .model_builder import build_model
    paths = [os.fspath(p) for p in paths]
    if use_cache:
        from .bundle import load_cached
        try:
            cached = load_cached(paths)
        except OSError:
            cached = None
        if cached is not None:
            cached.sources = paths
            cached.errors = []
            return cached
    logs, streams, texts, errors, warnings = [], [], [], [], []
    bundles = []
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
        model = build_model(logs, warnings=[str(w) for w in warnings], streams=streams)
    from .oom_report import attach_oom_report
    for t in texts:
        try:
            attach_oom_report(model, t)
        except ProfileError as e:
            errors.append(e)
    model.sources = paths
    model.errors = [str(e) for e in errors]
    if use_cache and not errors and not bundles:
        from .bundle import store_cached
        try:
            store_cached(model, paths)
        except OSError:
            pass
    return model


__all__ = ["load_profile", "sniff", "ProfileError", "ProfileWarning"]
