"""Parquet export: one file per table (``OUT/items.parquet`` ...), written batch by batch; a
profile of several ranks has one file per rank of each table of items
(``OUT/items_00000.parquet``, ``OUT/items_00001.parquet``, ...: ``read_parquet('OUT/items_*
.parquet')`` reads them as one), written one rank at a time (see ``ranks``)."""

from __future__ import annotations

import os
import re

from legate_prof.export import require
from legate_prof.export.arrow import batches, schema
from legate_prof.export.ranks import by_rank, ranks_of, whole_tables
from legate_prof.export.tables import CHUNK_ROWS, ITEM_TABLES, TABLES
from legate_prof.output_file import atomic_folder

OUR_FILE = re.compile(r"(%s)(_\d+)?\.parquet" % "|".join(TABLES))


def _earlier_export(folder):
    """A folder that holds nothing but our tables' files (an earlier export) may be replaced."""
    return all(OUR_FILE.fullmatch(p.name) and p.is_file() for p in folder.iterdir())


def rank_file(table, rank):
    return f"{table}_{rank:05d}.parquet"


def write(model, out, chunk_rows=CHUNK_ROWS):
    """Write the profile (a model, or a profile held per rank) as Parquet files in ``out``."""
    require("pyarrow.parquet", "export")
    with atomic_folder(out, _earlier_export, "Parquet export of legate_prof") as tmp:
        return write_tables(model, tmp, chunk_rows)


def write_tables(profile, folder, chunk_rows=CHUNK_ROWS):
    """The tables' files in ``folder`` (which exists); rows per table."""
    pq = require("pyarrow.parquet", "export")
    counts = dict.fromkeys(TABLES, 0)

    def write_file(name, table, chunks):
        with pq.ParquetWriter(os.path.join(folder, name), schema(table)) as w:
            for b in batches(chunks, table):
                w.write_batch(b)
                counts[table] += b.num_rows

    if len(ranks_of(profile)) > 1:
        for rank in by_rank(profile):  # one rank's model at a time, its four files
            for table in ITEM_TABLES:
                write_file(rank_file(table, rank.rank), table, rank.chunks(table, chunk_rows))
    else:
        writers = {t: pq.ParquetWriter(os.path.join(folder, f"{t}.parquet"), schema(t))
                   for t in ITEM_TABLES}
        try:
            for rank in by_rank(profile, cut=False):
                for table, w in writers.items():
                    for b in batches(rank.chunks(table, chunk_rows), table):
                        w.write_batch(b)
                        counts[table] += b.num_rows
        finally:
            for w in writers.values():
                w.close()
    # (after the ranks: reading them let go of what opening them read)
    for table, chunks in whole_tables(profile, chunk_rows):
        write_file(f"{table}.parquet", table, chunks)
    return counts


def table_files(folder):
    """{table: [its files]} of a Parquet export folder, or None when ``folder`` is not one
    (a folder of our tables' files only, ``items`` among them)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    found = {}
    for n in names:
        m = OUR_FILE.fullmatch(n)
        if m is None or not os.path.isfile(os.path.join(folder, n)):
            return None
        found.setdefault(m.group(1), []).append(os.path.join(folder, n))
    return found if "items" in found else None
