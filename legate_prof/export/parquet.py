"""Parquet export: one file per table (``OUT/items.parquet`` ...), written batch by batch."""

from __future__ import annotations

import os

from legate_prof.export import require
from legate_prof.export.arrow import batches, schema
from legate_prof.output_file import atomic_folder
from legate_prof.export.tables import CHUNK_ROWS, TABLES


def _earlier_export(folder):
    """A folder that holds nothing but our tables' files (an earlier export) may be replaced."""
    ours = {f"{t}.parquet" for t in TABLES}
    return all(p.name in ours and p.is_file() for p in folder.iterdir())


def write(model, out, chunk_rows=CHUNK_ROWS):
    pq = require("pyarrow.parquet", "export")
    counts = {}
    with atomic_folder(out, _earlier_export, "Parquet export of legate_prof") as tmp:
        for table in TABLES:
            n = 0
            with pq.ParquetWriter(os.path.join(tmp, f"{table}.parquet"), schema(table)) as w:
                for b in batches(model, table, chunk_rows):
                    w.write_batch(b)
                    n += b.num_rows
            counts[table] = n
    return counts
