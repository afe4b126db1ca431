"""Parquet files and DuckDB databases of the tables, and ``legate_prof sql``.

pyarrow and duckdb are optional (``pip install legate_prof[export]``); a missing one is one
line naming the extra.
"""

from __future__ import annotations

import os

from ..errors import ProfileError
from .tables import TABLE_NAMES, item_chunks, small_tables

VIEWS = {
    "provenance_totals": """
        SELECT p.text AS provenance, k.text AS kind, count(*) AS items,
               sum(i.duration_ns) AS total_ns, sum(i.running_ns) AS running_ns,
               median(i.duration_ns) AS median_ns
        FROM items i JOIN provenance p USING (provenance) JOIN kinds k USING (kind)
        WHERE i.provenance > 0
        GROUP BY 1, 2 ORDER BY total_ns DESC""",
    "group_utilization": """
        SELECT g.rank, g."group", count(l.lane) AS lanes, g.busy_ns,
               g.busy_ns / (SELECT max(stop_ns) - min(start_ns) FROM items)
                 / greatest(count(l.lane), 1) AS average_utilization
        FROM groups g LEFT JOIN lanes l ON l.rank = g.rank AND l."group" = g."group"
        GROUP BY g.rank, g."group", g.busy_ns ORDER BY g.rank, g."group\"""",
}


def _need(module, extra):
    try:
        return __import__(module)
    except ImportError:
        raise ProfileError(module, f"not installed; pip install 'legate_prof[{extra}]'") \
            from None


def _arrow(columns):
    pa = _need("pyarrow", "export")
    return pa.table({k: pa.array(v) for k, v in columns.items()})


def write_parquet(model, out_dir):
    """One ``TABLE.parquet`` per table in ``out_dir`` (items written chunk by chunk)."""
    pq = _need("pyarrow.parquet", "export").parquet
    from ..output_file import atomic_output
    os.makedirs(out_dir, exist_ok=True)
    written = {}
    for name, cols in small_tables(model).items():
        path = os.path.join(out_dir, f"{name}.parquet")
        with atomic_output(path) as tmp:
            pq.write_table(_arrow(cols), tmp)
        written[name] = len(next(iter(cols.values())))
    path = os.path.join(out_dir, "items.parquet")
    n = 0
    with atomic_output(path) as tmp:
        writer = None
        for cols in item_chunks(model):
            t = _arrow(cols)
            if writer is None:
                writer = pq.ParquetWriter(tmp, t.schema)
            writer.write_table(t)
            n += t.num_rows
        if writer is None:  # no items: an empty file with the schema
            pq.write_table(_arrow({"item": []}), tmp)
        else:
            writer.close()
    written["items"] = n
    return written


def connect(model, path=":memory:"):
    """A DuckDB connection holding the tables and views (items inserted chunk by chunk)."""
    duckdb = _need("duckdb", "sql")
    con = duckdb.connect(path)
    tables = dict(small_tables(model))
    for name, cols in tables.items():
        _insert(con, name, _arrow(cols), create=True)
    first = True
    for cols in item_chunks(model):
        _insert(con, "items", _arrow(cols), create=first)
        first = False
    if first:
        con.execute("CREATE TABLE items (item BIGINT, rank INTEGER, lane INTEGER, row INTEGER, "
                    "kind INTEGER, name INTEGER, start_ns BIGINT, stop_ns BIGINT, "
                    "create_ns BIGINT, ready_ns BIGINT, duration_ns BIGINT, running_ns BIGINT, "
                    "op_id UBIGINT, provenance INTEGER)")
    for name, sql in VIEWS.items():
        con.execute(f"CREATE VIEW {name} AS {sql}")
    return con


def _insert(con, name, table, create):
    con.register("_chunk", table)
    if create:
        con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM _chunk')
    else:
        con.execute(f'INSERT INTO "{name}" SELECT * FROM _chunk')
    con.unregister("_chunk")


def write_duckdb(model, path):
    from ..output_file import atomic_output
    with atomic_output(path) as tmp:
        os.unlink(tmp)  # duckdb creates the file itself
        con = connect(model, tmp)
        con.close()
        wal = tmp + ".wal"
        if os.path.exists(wal):
            os.unlink(wal)
    return {name: None for name in TABLE_NAMES}


def run_sql(model, query):
    """(column names, rows) of ``query`` over the tables."""
    con = connect(model)
    try:
        cur = con.execute(query)
    except Exception as e:  # duckdb's own errors: one line, the query is the user's input
        raise ProfileError("sql", str(e).splitlines()[0]) from None
    cols = [d[0] for d in cur.description] if cur.description else []
    return cols, cur.fetchall()
