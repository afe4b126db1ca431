"""DuckDB export and queries: the export tables plus views (docs/export.md), from a model,
a profile held per rank, or a Parquet export folder."""

from __future__ import annotations

import contextlib
import os
import shutil

from legate_prof.errors import ProfileError
from legate_prof.export import require
from legate_prof.export.arrow import batches, schema
from legate_prof.export.parquet import table_files, write_tables
from legate_prof.export.ranks import by_rank, whole_tables
from legate_prof.export.tables import CHUNK_ROWS, ITEM_TABLES, TABLES
from legate_prof.output_file import (atomic_output, end_now, scratch_folder,
                                     temporary_directory)

VIEWS = {
    # time spent per provenance line (tasks, copies, ... launched from it; not the lifetimes
    # of its instances, arrays and operations, which topped it: held, not spent — loops3's
    # 11 operations, every rank's stream repeating them, read 38 s of an 8.3 s run; nor the
    # program's waits for values, the waiting line's, not time its work spent)
    "provenance_totals": """
        SELECT provenance, kind, count(*) AS items, sum(duration_ns) AS total_ns,
               sum(duration_ns - waiting_ns) AS running_ns
        FROM items WHERE provenance <> ''
                   AND kind NOT IN ('instance', 'array', 'runtime_op', 'program_wait')
        GROUP BY provenance, kind
        ORDER BY total_ns DESC, provenance, kind""",
    "copy_bandwidth": """
        SELECT *, size_bytes / nullif(duration_ns, 0) AS gb_per_s FROM copies""",
}
VIEW_NEEDS = {"provenance_totals": "items", "copy_bandwidth": "copies"}


def _fill(con, profile, chunk_rows):
    """The tables, filled rank by rank (one rank's model at a time), and the views."""
    pa = require("pyarrow", "export")

    def insert(table, chunks):
        for b in batches(chunks, table):
            con.register("_chunk", b)
            con.execute(f"INSERT INTO {table} SELECT * FROM _chunk")
            con.unregister("_chunk")

    for table in TABLES:  # created empty first: a table without rows still has its columns
        con.register("_chunk", pa.table({f.name: pa.array([], f.type) for f in schema(table)}))
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM _chunk")
        con.unregister("_chunk")
    for rank in by_rank(profile, cut=False):
        for table in ITEM_TABLES:
            insert(table, rank.chunks(table, chunk_rows))
    for table, chunks in whole_tables(profile, chunk_rows):
        insert(table, chunks)
    _views(con)


def _views(con):
    have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables")
            .fetchall()}
    for name, sql in VIEWS.items():
        if VIEW_NEEDS[name] in have:
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


# the database a query runs in reads only the tables handed to it and writes nothing
# (docs/robustness.md): no file system (COPY ... TO, ATTACH, EXPORT, read_csv('/any/path')), no
# extension installed or loaded (INSTALL reaches the network), and none of it can be set back
# (lock_configuration); what it spills goes into this command's scratch folder, not '.tmp'
# of the working folder
SAFE_CONFIG = {"enable_external_access": False, "autoinstall_known_extensions": False,
               "autoload_known_extensions": False, "allow_community_extensions": False,
               "lock_configuration": True}


def _connect(scratch):
    duckdb = require("duckdb", "sql")
    return duckdb.connect(":memory:", config={**SAFE_CONFIG, "temp_directory":
                                              os.path.join(scratch, "spill")})


def query(profile, sql, chunk_rows=CHUNK_ROWS):
    """Run ``sql`` over the profile's tables; (column names, rows).  A model's tables go into
    an in-memory DuckDB; a profile held per rank is written rank by rank as Parquet files in a
    scratch folder (``output_file.scratch_folder``: gone when the command ends, or at the next
    command when a signal stopped it), which DuckDB reads where they lie (memory: one rank's
    model, and what the query itself holds)."""
    require("duckdb", "sql")
    with scratch_folder("legate_prof_sql") as scratch:
        if hasattr(profile, "item_parts") and len(profile.item_parts()) > 1:
            folder = os.path.join(scratch, "tables")
            try:
                os.mkdir(folder)
                write_tables(profile, folder, chunk_rows)
            except OSError as e:  # a full disk, say: one line (the folder goes, files and all)
                raise ProfileError(temporary_directory(), "could not write the ranks' tables "
                                   f"for the query ({e.strerror or str(e).splitlines()[0]}); "
                                   "TMPDIR chooses where they go") from None
            return _query_files(table_files(folder), sql, scratch)
        con = _connect(scratch)
        try:
            _fill(con, profile, chunk_rows)
            return _run(con, sql)
        finally:
            con.close()


def query_parquet(folder, sql):
    """Run ``sql`` over a Parquet export folder (``export --format parquet``), its files read
    where they lie: each table a view over its file, or over its ranks' files."""
    require("duckdb", "sql")
    files = table_files(folder)
    if files is None:
        raise ProfileError(folder, "is not a Parquet export of legate_prof (no items*.parquet, "
                                   "or files of other names)")
    with scratch_folder("legate_prof_sql") as scratch:
        return _query_files(files, sql, scratch)


def _query_files(files, sql, scratch):
    """Each table a view over its files, named one by one to Arrow: never a path DuckDB would
    expand (a received folder named ``*`` globbed every sibling export into the result)."""
    dataset = require("pyarrow.dataset", "sql")
    # (column chunks read as they are scanned, not buffered ahead: 223 MB against 240 at 2 M
    # items, and faster; docs/performance.md)
    parquet = dataset.ParquetFileFormat(
        default_fragment_scan_options=dataset.ParquetFragmentScanOptions(pre_buffer=False))
    con = _connect(scratch)
    try:
        for table, paths in files.items():
            con.register(f"{table}_files", dataset.dataset(
                [os.path.abspath(p) for p in paths], format=parquet))
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM {table}_files")
        _views(con)
        return _run(con, sql)
    finally:
        con.close()


STOP_WAIT_S = 3.0  # how long Ctrl-C waits for DuckDB to stop a query


def statement_count(sql):
    """How many statements ``sql`` holds (DuckDB runs them all and answers the last's rows);
    0 where DuckDB cannot split it (its error is said when the query runs)."""
    import duckdb
    try:
        return len(duckdb.connect().extract_statements(sql))
    except duckdb.Error:
        return 0


def _run(con, sql):
    """(column names, rows) of ``sql``, asked in a thread of its own while this one listens
    for Ctrl-C.  DuckDB stops a query only once each of its running tasks has finished, and
    one task of a large join can run for minutes: Ctrl-C inside ``execute`` sometimes left
    the command waiting there, deaf to a second Ctrl-C.  Here Ctrl-C interrupts the query,
    and a query that has not stopped within STOP_WAIT_S is left behind: the command ends at
    once (130), its temporaries removed (``output_file.end_now``)."""
    import threading
    answer, done = {}, threading.Lock()
    done.acquire()  # (released when the answer is in: a Thread.join that Ctrl-C breaks marks
    # the thread as ended, bpo-45274)

    def ask():
        try:
            cur = con.execute(sql)
            answer["columns"] = [d[0] for d in cur.description] if cur.description else []
            answer["rows"] = cur.fetchall()
        except BaseException as e:  # (raised in the caller's thread, below)
            answer["error"] = e
        finally:
            done.release()

    try:  # (the start too: it waits for the thread to run, which may be asking already)
        threading.Thread(target=ask, name="legate_prof sql", daemon=True).start()
        done.acquire()  # (a wait that Ctrl-C ends)
    except KeyboardInterrupt:
        con.interrupt()
        if not done.acquire(timeout=STOP_WAIT_S):
            end_now(130)
        raise
    if "error" in answer:
        raise answer.pop("error")
    return answer["columns"], answer["rows"]
