"""`legate_prof dump`: every record of a Legion Prof log as one JSON line (a test oracle)."""

from __future__ import annotations

import json

import numpy as np

from legate_prof.read.legion_log import LegionProfReader


def records_of(log):
    """Yield (record name, dict) for every record, grouped by record type in preamble order."""
    for lay in sorted(log.layouts.values(), key=lambda lay: lay.rid):
        table = log.tables.get(lay.name)
        if table is None:
            continue
        if isinstance(table, np.ndarray):
            fields = table.dtype.names
            for row in table.tolist():
                yield lay.name, dict(zip(fields, row))
        else:
            for rec in table:
                yield lay.name, rec


def dump(path, out):
    """Write one file's records; returns the reader's warnings."""
    log = LegionProfReader(path).read()
    for name, rec in records_of(log):
        out.write(json.dumps({"file": str(path), "record": name, **rec}))
        out.write("\n")
    return log.warnings
