"""Exports of a TraceModel to the tools people already use: Perfetto, Chrome trace JSON,
Parquet, DuckDB, and SQL queries over the same tables (docs/export.md).

May import ``analyze`` and below: a profile of several ranks is read through its parts
(``item_parts()``, ``summary_model()``, ``merged_model()``), never through a private name.
"""

from __future__ import annotations

import importlib

from legate_prof.errors import ProfileError

FORMATS = ("perfetto", "chrome", "parquet", "duckdb")
_MODULES = {"perfetto": "perfetto", "chrome": "chrome", "parquet": "parquet",
            "duckdb": "duckdb_db"}


class MissingExtra(Exception):
    """An optional dependency is not installed; the message names the extra to install."""


def require(module, extra):
    """Import ``module`` or raise MissingExtra naming ``legate_prof[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(f"'{module}' is not installed; install it with "
                           f"pip install 'legate_prof[{extra}]'") from None


def export(profile, fmt, out, chunk_rows=None):
    """Write ``profile`` as ``fmt`` to ``out`` (a file; a directory for parquet).  ``profile``
    is a model, or a profile of several ranks' models (``item_parts()``, ``summary_model()``,
    ``merged_model()``): Parquet and DuckDB read it rank by rank, the timeline formats merged."""
    if fmt not in FORMATS:
        raise ProfileError(out, f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
    mod = importlib.import_module(f".{_MODULES[fmt]}", __name__)
    kw = {} if chunk_rows is None else {"chunk_rows": chunk_rows}
    if fmt in ("perfetto", "chrome"):
        from legate_prof.export.ranks import merged
        profile = merged(profile)
    return mod.write(profile, out, **kw)
