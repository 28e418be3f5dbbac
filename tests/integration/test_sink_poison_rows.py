"""The PostgreSQL sink of the foreachBatch jobs: a row PostgreSQL refuses for its data
is set aside with the reason, and the rest of its batch is written, in the caller's
transaction (the batch ledger's), instead of the batch failing again on every retry. With a
unique key, an identical copy of a stored row is skipped and another version of it is a
conflict, returned with the stored version (the jobs dead-letter it)."""

import datetime as dt
import json

from kafka_patterns.clients import postgres

COLUMNS = ("sensor", "seq", "kafka_partition", "event_time")
WHEN = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def test_refused_rows_are_set_aside_and_the_rest_of_the_batch_is_written(cluster):
    rows = [("sensor-01", 1, 0, WHEN),
            ("sensor-\x0002", 2, 0, WHEN),  # a NUL: no PostgreSQL text may hold one
            ("sensor-03", 3, 2**40, WHEN),  # beyond the INT column
            ("sensor-04", 4, 1, WHEN)]
    with postgres.connect() as conn:
        conn.execute("CREATE TEMP TABLE poison_sink (sensor TEXT, seq BIGINT, kafka_partition INT, "
                     "event_time TIMESTAMPTZ) ON COMMIT DROP")
        conn.execute("CREATE TEMP TABLE ledger_stand_in (n INT) ON COMMIT DROP")
        conn.execute("INSERT INTO ledger_stand_in VALUES (1)")  # written before, in the same transaction
        done = postgres.insert_rows_isolating_failures(conn, "poison_sink", COLUMNS, rows)
        written, refused = done.written, done.refused
        stored = conn.execute("SELECT seq FROM poison_sink ORDER BY seq").fetchall()
        ledger = conn.execute("SELECT n FROM ledger_stand_in").fetchall()
    assert written == 2 and [s for (s,) in stored] == [1, 4]
    assert [rows[n][1] for n, _ in refused] == [2, 3]
    assert all(reason for _, reason in refused)
    assert ledger == [(1,)], "the caller's transaction must survive the refused rows"


def test_a_clean_batch_is_written_in_one_copy(cluster):
    with postgres.connect() as conn:
        conn.execute("CREATE TEMP TABLE clean_sink (sensor TEXT, seq BIGINT, kafka_partition INT, "
                     "event_time TIMESTAMPTZ) ON COMMIT DROP")
        done = postgres.insert_rows_isolating_failures(
            conn, "clean_sink", COLUMNS, [(f"sensor-{i}", i, 0, WHEN) for i in range(100)])
        written, refused = done.written, done.refused
        count = conn.execute("SELECT count(*) FROM clean_sink").fetchone()[0]
    assert (written, refused, count) == (100, [], 100)


def test_with_a_unique_key_an_identical_copy_is_skipped_and_counted(cluster):
    rows = [("sensor-01", 1, 0, WHEN), ("sensor-01", 2, 0, WHEN), ("sensor-01", 1, 3, WHEN),  # 1 again
            ("sensor-\x0002", 9, 0, WHEN)]  # and a refused row in the same batch
    with postgres.connect() as conn:
        conn.execute("CREATE TEMP TABLE unique_sink (sensor TEXT, seq BIGINT, kafka_partition INT, "
                     "event_time TIMESTAMPTZ, UNIQUE (sensor, seq)) ON COMMIT DROP")
        conn.execute("INSERT INTO unique_sink VALUES ('sensor-01', 2, 0, %s)", (WHEN,))  # an earlier batch's
        done = postgres.insert_rows_isolating_failures(conn, "unique_sink", COLUMNS, rows, unique=("sensor", "seq"),
                                                 provenance=("kafka_partition",))
        stored = conn.execute("SELECT sensor, seq, kafka_partition FROM unique_sink ORDER BY seq").fetchall()
    assert (done.written, done.duplicates, len(done.refused), done.conflicts) == (1, 2, 1, [])
    assert stored == [("sensor-01", 1, 0), ("sensor-01", 2, 0)], "the first copy of a reading is kept"


def test_with_a_unique_key_another_version_is_a_conflict_returned_with_the_stored_one(cluster):
    later = WHEN + dt.timedelta(seconds=1)
    rows = [("sensor-01", 1, 0, WHEN), ("sensor-01", 1, 2, later),  # in the same batch
            ("sensor-01", 2, 1, later)]  # against an earlier batch's
    with postgres.connect() as conn:
        conn.execute("CREATE TEMP TABLE conflict_sink (sensor TEXT, seq BIGINT, kafka_partition INT, "
                     "event_time TIMESTAMPTZ, UNIQUE (sensor, seq)) ON COMMIT DROP")
        conn.execute("INSERT INTO conflict_sink VALUES ('sensor-01', 2, 0, %s)", (WHEN,))
        done = postgres.insert_rows_isolating_failures(conn, "conflict_sink", COLUMNS, rows, unique=("sensor", "seq"),
                                                 provenance=("kafka_partition",))
        stored = conn.execute("SELECT seq, event_time FROM conflict_sink ORDER BY seq").fetchall()
    assert (done.written, done.duplicates) == (1, 0)
    assert [n for n, _ in done.conflicts] == [1, 2]
    versions = [json.loads(v) for _, v in done.conflicts]
    assert [(v["seq"], v["kafka_partition"]) for v in versions] == [(1, 0), (2, 0)], "the stored versions"
    assert stored == [(1, WHEN), (2, WHEN)], "a conflicting version is not written"
