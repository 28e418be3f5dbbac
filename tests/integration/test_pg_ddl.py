"""Jobs create their sink tables and the batch ledger as they start, several at once
(fan-out's subscribers, patterns side by side): pg.ensure must not fail against itself."""

import threading
import uuid

from kafka_patterns.clients import postgres


def test_the_same_new_table_ensured_from_many_threads_at_once_fails_none(cluster):
    table = f"ddl_race_{uuid.uuid4().hex[:8]}"
    ddl = f"CREATE TABLE IF NOT EXISTS {table} (id BIGSERIAL PRIMARY KEY, v TEXT)"
    start, errors = threading.Barrier(8), []

    def ensure() -> None:
        start.wait()
        try:
            postgres.ensure(ddl, f"CREATE INDEX IF NOT EXISTS {table}_v ON {table} (v)")
        except Exception as e:  # the assertion below names it
            errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=ensure) for _ in range(8)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
    finally:
        postgres.ensure(f"DROP TABLE IF EXISTS {table}")
