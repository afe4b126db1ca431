"""Parquet export: one file per table (``OUT/items.parquet`` ...), written batch by batch."""

from __future__ import annotations

import os

from . import require
from .arrow import batches, schema
from .atomic import atomic_path
from .tables import CHUNK_ROWS, TABLES


def write(model, out, chunk_rows=CHUNK_ROWS):
    pq = require("pyarrow.parquet", "export")
    counts = {}
    with atomic_path(out, directory=True) as tmp:
        for table in TABLES:
            n = 0
            with pq.ParquetWriter(os.path.join(tmp, f"{table}.parquet"), schema(table)) as w:
                for b in batches(model, table, chunk_rows):
                    w.write_batch(b)
                    n += b.num_rows
            counts[table] = n
    return counts
