"""DuckDB export and queries: the export tables plus views (docs/export.md)."""

from __future__ import annotations

import contextlib
import os
import shutil

from legate_prof.errors import ProfileError
from legate_prof.export import require
from legate_prof.export.arrow import batches, schema
from legate_prof.output_file import atomic_output
from legate_prof.export.tables import CHUNK_ROWS, TABLES

VIEWS = {
    # time spent per provenance line (tasks, copies, ... launched from it)
    "provenance_totals": """
        SELECT provenance, kind, count(*) AS items, sum(duration_ns) AS total_ns,
               sum(duration_ns - waiting_ns) AS running_ns
        FROM items WHERE provenance <> '' GROUP BY provenance, kind""",
    "copy_bandwidth": """
        SELECT *, size_bytes / nullif(duration_ns, 0) AS gb_per_s FROM copies""",
}


def _fill(con, model, chunk_rows):
    for table in TABLES:
        sch = schema(table)
        first = True
        for b in batches(model, table, chunk_rows):
            con.register("_chunk", b)
            if first:
                con.execute(f'CREATE TABLE {table} AS SELECT * FROM _chunk')
                first = False
            else:
                con.execute(f'INSERT INTO {table} SELECT * FROM _chunk')
            con.unregister("_chunk")
        if first:  # no rows: still create the table with its columns
            pa = require("pyarrow", "export")
            con.register("_chunk", pa.table({f.name: pa.array([], f.type) for f in sch}))
            con.execute(f'CREATE TABLE {table} AS SELECT * FROM _chunk')
            con.unregister("_chunk")
    for name, sql in VIEWS.items():
        con.execute(f"CREATE VIEW {name} AS {sql}")


def write(model, out, chunk_rows=CHUNK_ROWS):
    duckdb = require("duckdb", "sql")
    with atomic_output(out, stream=False) as tmp:
        os.unlink(tmp)  # DuckDB creates the file itself
        try:
            con = duckdb.connect(tmp)
            try:
                _fill(con, model, chunk_rows)
            finally:
                con.close()
        except duckdb.Error as e:  # a full disk, say: one line, and none of its files left
            _remove_beside(tmp)
            raise ProfileError(out, f"could not write ({_reason(e)})") from None
        finally:
            shutil.rmtree(tmp + ".tmp", ignore_errors=True)  # DuckDB's spill folder
    return {}


def _remove_beside(db):
    """What DuckDB writes beside a database file: its write-ahead log and its spill folder."""
    with contextlib.suppress(OSError):
        os.unlink(db + ".wal")
    shutil.rmtree(db + ".tmp", ignore_errors=True)


def _reason(e):
    """The cause in a DuckDB error, without the temporary file's name it quotes."""
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    for cause in ("No space left on device", "Disk quota exceeded", "Permission denied",
                  "Read-only file system"):
        if cause in text:
            return cause
    return text


def query(model, sql, chunk_rows=CHUNK_ROWS):
    """Run ``sql`` over the model's tables in an in-memory DuckDB; (column names, rows)."""
    duckdb = require("duckdb", "sql")
    con = duckdb.connect(":memory:")
    try:
        _fill(con, model, chunk_rows)
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description] if cur.description else []
        return cols, cur.fetchall()
    finally:
        con.close()
