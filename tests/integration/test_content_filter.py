"""content-based filtering: each alert topic holds exactly the readings matching its predicate."""

import pytest

from helpers import one_run_at_a_time
from kafka_patterns.clients import kafka
from kafka_patterns.jobs.content_filter import PREDICATES_PY
from pattern_harness import generator
from pattern_harness.scenarios import base, content_filter

pytestmark = one_run_at_a_time("content-filter")


@pytest.mark.slow
def test_alert_topics_hold_exactly_the_matching_readings(cluster):
    outcome = content_filter.run(records=2_000)
    d = outcome.delivery
    assert d.acked > 0 and d.lost == 0, outcome.notes
    assert d.reordered == 0
    assert all(outcome.checks.values()), outcome.checks
    # At-least-once Kafka sink: duplicates are counted (none expected without a fault).
    assert d.received == d.acked + d.duplicated
    assert outcome.verdict == "PASS"


@pytest.mark.slow
def test_in_real_time_mode_it_routes_while_running_and_a_stop_logs_no_error(cluster, tmp_path):
    """The content filter run as a user runs a continuous job in Spark's real-time mode
    (`--mode real-time`): every matching reading of the run reaches its alert topic while
    the job runs, and stopping it (SIGTERM) logs no ERROR. Real-time mode has no batch
    boundary to stop at: Spark aborts the running epoch's tasks and logs each at ERROR
    with a trace, which kafka_patterns/log4j2.properties filters (why is written there)."""
    job = content_filter.JOBS[0]
    topic = base.input_topics(job)[0]
    run_id = base.new_run()
    starting = base.end_offsets([topic])
    out_start = base.end_offsets(list(PREDICATES_PY))
    log = tmp_path / f"{job}.log"
    # A task slot per input partition: real-time mode keeps one task running for each.
    job_process = base.spawn_job(job, base.job_args(job, run_id, starting, "--mode", "real-time", bounded=False),
                                 log, env={"SPARK_MASTER": "local[8]"})
    try:
        produced = generator.produce(topic, 300, run=run_id, seed=11)
        want = content_filter.expected_routes(produced.readings)

        def all_routed() -> bool:
            if not job_process.alive():
                raise AssertionError(f"the job exited:\n{job_process.log_tail()}")
            got = content_filter.received_ids(base.read_records(out_start), run_id)
            return all(want[t] <= set(got.get(t, [])) for t in want)

        kafka.wait_until(all_routed, 180, 1, "every matching reading in its alert topic")
    finally:
        job_process.stop()
    errors = [line for line in log.read_text().splitlines() if " ERROR " in line or line.startswith("Traceback")]
    assert not errors, "\n".join(errors[:20])
