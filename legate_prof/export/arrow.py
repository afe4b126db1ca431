"""Table chunks as Arrow record batches (shared by the Parquet and DuckDB exports)."""

from __future__ import annotations

import numpy as np

from legate_prof.export import require
from legate_prof.export.tables import SCHEMAS


def schema(table):
    pa = require("pyarrow", "export")
    types = {"int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(),
             "uint64": pa.uint64(), "string": pa.string(), "bool": pa.bool_(),
             "float64": pa.float64()}
    return pa.schema([(c, types[t]) for c, t, _ in SCHEMAS[table]])


def batches(chunks, table):
    """Record batches of ``table``, one per chunk (a dict of columns)."""
    pa = require("pyarrow", "export")
    sch = schema(table)
    for chunk in chunks:
        cols = []
        for field in sch:
            v = chunk[field.name]
            if isinstance(v, np.ma.MaskedArray):
                cols.append(pa.array(v.data, type=field.type, mask=np.ma.getmaskarray(v)))
            else:
                cols.append(pa.array(v, type=field.type))
        yield pa.RecordBatch.from_arrays(cols, schema=sch)
