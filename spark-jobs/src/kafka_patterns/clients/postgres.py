"""PostgreSQL access for the sinks: one connection helper and the batch ledger that
makes a Spark foreachBatch sink exactly-once (rows and batch id in one transaction)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import psycopg

from kafka_patterns.config import settings

LEDGER_DDL = """
CREATE TABLE IF NOT EXISTS spark_batches (
    job TEXT NOT NULL,
    batch_id BIGINT NOT NULL,
    committed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (job, batch_id)
)"""


@contextmanager
def connect(autocommit: bool = False):
    with psycopg.connect(settings.postgres_dsn(), autocommit=autocommit) as conn:
        yield conn


# The advisory lock every ensure() takes: CREATE TABLE IF NOT EXISTS is not safe against
# itself, and two jobs starting at once (fan-out's subscribers, patterns side by side)
# both creating spark_batches failed with a unique violation on pg_type.
DDL_LOCK = 0x6B70_6464  # "kpdd"


def ensure(*ddl: str, table: str | None = None) -> None:
    """Create tables/indexes (idempotent DDL), one caller at a time; with `table` (a job's
    sink table, named in the catalogue), `{table}` in a statement stands for it."""
    with connect() as conn:  # one transaction: the lock holds until its commit
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (DDL_LOCK,))
        for statement in ddl:
            conn.execute(statement.format(table=table) if table else statement)


def insert_rows(conn: psycopg.Connection, table: str, columns: Sequence[str], rows: Iterable[Sequence]) -> int:
    """COPY rows into a table inside the caller's transaction; returns the row count."""
    n = 0
    with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


@dataclass
class Inserted:
    """What insert_rows_isolating_failures did with a batch. Rows are named by their
    index in the batch, so a caller can dead-letter the records they came from."""
    written: int = 0
    refused: list[tuple[int, str]] = field(default_factory=list)  # (row, PostgreSQL's reason)
    duplicates: int = 0  # identical copies of a row the table already held (or the batch, earlier)
    conflicts: list[tuple[int, str]] = field(default_factory=list)  # (row, the stored version as JSON)


def insert_rows_isolating_failures(conn: psycopg.Connection, table: str, columns: Sequence[str],
                                   rows: Sequence[Sequence], unique: Sequence[str] = (),
                                   provenance: Sequence[str] = ()) -> Inserted:
    """insert_rows, except that a row PostgreSQL refuses for its data (psycopg.DataError:
    a NUL in a text, a value out of a column's range, an invalid encoding) does not sink
    the batch: the batch is then written row by row, each in a savepoint, and the
    refused rows are returned with PostgreSQL's reason; the others are written. With
    `unique` (the columns of a unique index of the table), a row whose key is already
    there is not written: an identical copy (the same values apart from the `provenance`
    columns, where it was read from) is counted as a duplicate, another version is a
    conflict, returned with the stored version for the caller to show. The fast path is
    one COPY; the row by row path runs only for a batch that holds a refused row or a
    row whose key is taken."""
    try:
        with conn.transaction():  # a savepoint: a refused COPY leaves the caller's transaction usable
            return Inserted(written=insert_rows(conn, table, columns, rows))
    except (psycopg.DataError, ValueError):  # ValueError: psycopg refuses a NUL before sending
        pass
    except psycopg.errors.UniqueViolation:
        if not unique:
            raise
    out = Inserted()
    conflict = f" ON CONFLICT ({', '.join(unique)}) DO NOTHING" if unique else ""
    insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))}){conflict}"
    compared = [i for i, c in enumerate(columns) if c not in (*unique, *provenance)]
    # The stored version, and whether it equals the row; compared by PostgreSQL, so a
    # value counts as equal when it was stored from the same parameter (a timestamp in
    # the session's time zone, a float to the bit).
    same = " AND ".join(f"{columns[i]} IS NOT DISTINCT FROM %s" for i in compared) or "true"
    stored = (f"SELECT row_to_json(t)::text, {same} FROM {table} t "
              f"WHERE {' AND '.join(f'{c} = %s' for c in unique)}")
    key = [columns.index(c) for c in unique]
    for n, row in enumerate(rows):
        try:
            with conn.transaction():
                cur = conn.execute(insert, row)
            if cur.rowcount == 1:
                out.written += 1
                continue
            version, identical = conn.execute(stored, [row[i] for i in compared] + [row[i] for i in key]).fetchone()
            if identical:
                out.duplicates += 1
            else:
                out.conflicts.append((n, version))
        except (psycopg.DataError, ValueError) as e:
            out.refused.append((n, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
    return out


def claim_batch(conn: psycopg.Connection, job: str, batch_id: int) -> bool:
    """Record a batch as committed in the caller's transaction. False when it already
    was: a replayed batch after a restart, whose rows must not be written again."""
    cur = conn.execute("INSERT INTO spark_batches (job, batch_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                       (job, batch_id))
    return cur.rowcount == 1


def query(sql: str, params: Sequence = ()) -> list[tuple]:
    with connect() as conn:
        return conn.execute(sql, params).fetchall()
