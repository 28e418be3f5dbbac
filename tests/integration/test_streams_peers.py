"""The Kafka Streams peers of make bench (bench/streams) against the Spark jobs they
mirror, differentially: the same input (valid readings and every kind of bad record of
the contract's table) through the peer, then through the Spark job, and the same
records out of both: per output topic the same keys, values and headers, and the same
dead letters (key, value, headers), but for the `job` header that names who wrote it.

The peer runs first, as its own catalogue user, from the end of its input, until its
group has committed past the input; then the Spark job runs bounded over the same
offsets. Each side's records are told apart by offset (the peer's come first); other
runs' records in the same topics are left out by run id (outputs), and by source offset
and the writing job (letters: the jobs of other tests read the same input at the same
time and letter the same bad records). A test runs in the xdist group of the Spark job's
pattern, so no other run of that job writes its output topics meanwhile."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from bench import streams_peer
from helpers import one_run_at_a_time
from kafka_patterns.clients import kafka
from kafka_patterns.config import catalogue
from pattern_harness import bad_input, generator, job_runs
from pattern_harness.scenarios import pipeline

READINGS = 300


def produce_input(topic: str, run: str) -> int:
    """Valid readings (hot, cold and mild: every content-filter route) and every bad case
    of the contract's table, written as the bad-input suite writes them (compressed: one
    is 2 MB once decompressed); how many bad ones."""
    with bad_input.injecting() as injected:
        generator.produce(topic, READINGS, run=run, seed=41)
    return sum(1 for i in injected if not i.deduplicating_only)


def seed_profiles(run: str) -> None:
    (topic,) = catalogue.job(streams_peer.PEERS["enrich"]).lookups
    producer = kafka.producer()
    for station, profile in pipeline.profiles(run).items():
        producer.produce(topic, key=station, value=json.dumps(profile))
    if producer.flush(30):
        raise RuntimeError("the station profiles were not acknowledged within 30 s")


def in_range(letter, ranges: dict[str, dict[int, tuple[int, int]]]) -> bool:
    h = {k: (v or b"").decode() for k, v in letter.headers() or []}
    span = ranges.get(h.get("source.topic"), {}).get(int(h.get("source.partition", -1)))
    return span is not None and span[0] <= int(h["source.offset"]) < span[1]


def comparable(messages, deadletter: str, run: str, ranges, job: str) -> Counter:
    """(topic, key, value, headers but `job`) of this run's records: its outputs, and the
    letters `job` wrote of its input."""
    out = Counter()
    for m in messages:
        headers = tuple((k, v) for k, v in m.headers() or [] if k != "job")
        if m.topic() == deadletter:
            writer = {k: (v or b"").decode() for k, v in m.headers() or []}.get("job")
            if writer != job or not in_range(m, ranges):
                continue
            value = m.value()
        else:
            parsed = json.loads(m.value())
            if parsed.get("run") != run:
                continue
            value = json.dumps(parsed, sort_keys=True)  # Spark's and Jackson's spellings of a number differ
        out[(m.topic(), m.key(), value, headers)] += 1
    return out


# The stages with dead letters, each in the group of its Spark job's pattern (enrich also
# joins the station profiles the pipeline's runs write).
def pattern_of(job: str) -> str:
    return next(p.name for p in catalogue.patterns().values() if job in p.job_names)


LETTERING = [pytest.param(stage, marks=one_run_at_a_time(pattern_of(job)))
             for stage, job in streams_peer.PEERS.items() if catalogue.job(job).deadletter]


@pytest.mark.slow
@pytest.mark.parametrize("stage", LETTERING)
def test_the_streams_peer_writes_what_the_spark_job_writes(cluster, tmp_path, stage):
    spark_job = catalogue.job(streams_peer.PEERS[stage])
    topic, deadletter = spark_job.inputs[0], spark_job.deadletter_topic
    outputs = [*spark_job.output_topics, deadletter]
    run = job_runs.new_run()
    if stage == "enrich":
        seed_profiles(run)
    out_start = job_runs.end_offsets(outputs)
    peer = streams_peer.PeerProcess(stage, run, tmp_path / f"{stage}.log", "commit.interval.ms=200")
    try:
        peer.wait_running()
        start = job_runs.end_offsets([topic])
        bad = produce_input(topic, run)
        end = job_runs.end_offsets([topic])
        group = f"{streams_peer.user(stage)}-{run}"
        kafka.wait_until(lambda: job_runs.group_caught_up(group, end) or not peer.alive(), 120, 0.5,
                         f"the {stage} peer past its input")
        assert peer.alive(), peer.tail()
    finally:
        rc = peer.stop()
    assert rc in (0, 143), f"the peer stopped with {rc}: {peer.tail()}"
    middle = job_runs.end_offsets(outputs)
    job_runs.run_job(spark_job.name, run, start)
    ranges = {topic: {p: (start[topic][p], end[topic][p]) for p in start[topic]}}
    streams = comparable(job_runs.read_records(out_start, middle), deadletter, run, ranges, streams_peer.user(stage))
    spark = comparable(job_runs.read_records(middle), deadletter, run, ranges, spark_job.name)
    letters = sum(n for (t, *_), n in spark.items() if t == deadletter)
    assert letters >= bad and sum(spark.values()) > letters, "both sides had work"
    assert streams == spark, (f"only the peer wrote {list((streams - spark).items())[:5]}; "
                              f"only Spark wrote {list((spark - streams).items())[:5]}")


def final_windows(messages, run: str) -> dict[tuple, dict]:
    """(station, window start) -> the run's window version with the highest count, as the
    sink keeps it (pipeline.final_versions)."""
    best: dict[tuple, dict] = {}
    for m in messages:
        w = json.loads(m.value())
        k = (w.get("station"), w.get("window_start"))
        if w.get("run") == run and (k not in best or w["n"] > best[k]["n"]):
            best[k] = w
    return best


@pytest.mark.slow
@one_run_at_a_time("pipeline")
def test_the_streams_aggregate_counts_the_windows_the_spark_aggregate_counts(cluster, tmp_path):
    spark_job = catalogue.job(streams_peer.PEERS["aggregate"])
    (topic,), (output,) = spark_job.inputs, spark_job.output_topics
    run = job_runs.new_run()
    out_start = job_runs.end_offsets([output])
    peer = streams_peer.PeerProcess("aggregate", run, tmp_path / "aggregate.log", "commit.interval.ms=200")
    try:
        peer.wait_running()
        start = job_runs.end_offsets([topic])
        produced = generator.produce(topic, READINGS, run=run, seed=43)
        # A copy of some readings, as an at-least-once stage upstream may deliver them: counted once.
        producer = kafka.producer()
        for r in produced.readings[:40]:
            producer.produce(topic, key=r.sensor, value=r.to_json())
        assert producer.flush(30) == 0
        end = job_runs.end_offsets([topic])
        group = f"{streams_peer.user('aggregate')}-{run}"
        kafka.wait_until(lambda: job_runs.group_caught_up(group, end) or not peer.alive(), 180, 0.5,
                         "the aggregate peer past its input")

        # Past its input is not done: the readings go on through the repartition topic to
        # the windows. Done is every distinct reading in a window on the output.
        def counted() -> int:
            windows = final_windows(job_runs.read_records(out_start, job_runs.end_offsets([output])), run)
            return sum(w["n"] for w in windows.values())
        kafka.wait_until(lambda: counted() >= READINGS or not peer.alive(), 180, 0.5,
                         f"the aggregate peer's windows counting {READINGS} readings")
        assert peer.alive(), peer.tail()
    finally:
        rc = peer.stop()
    assert rc in (0, 143), f"the peer stopped with {rc}: {peer.tail()}"
    middle = job_runs.end_offsets([output])
    job_runs.run_job(spark_job.name, run, start)
    streams = final_windows(job_runs.read_records(out_start, middle), run)
    spark = final_windows(job_runs.read_records(middle), run)
    assert sum(w["n"] for w in spark.values()) == READINGS, "every distinct reading counted once, by Spark"
    assert streams.keys() == spark.keys()
    for k, w in spark.items():
        s = streams[k]
        assert set(s) == set(w), k
        assert {f: s.get(f) for f in w if f != "temperature_sum"} == {f: v for f, v in w.items()
                                                                       if f != "temperature_sum"}, k
        assert s["temperature_sum"] == pytest.approx(w["temperature_sum"]), k  # summed in another order
