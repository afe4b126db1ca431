"""Exports of a TraceModel to the tools people already use: Perfetto, Chrome trace JSON,
Parquet, DuckDB, and SQL queries over the same tables (docs/export.md)."""

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


def export(model, fmt, out, chunk_rows=None):
    """Write ``model`` as ``fmt`` to ``out`` (a file; a directory for parquet)."""
    if fmt not in FORMATS:
        raise ProfileError(out, f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
    mod = importlib.import_module(f".{_MODULES[fmt]}", __name__)
    kw = {} if chunk_rows is None else {"chunk_rows": chunk_rows}
    return mod.write(model, out, **kw)
