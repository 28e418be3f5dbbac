"""make dlq: letters grouped by reason, with the jobs and source topics (pure part)."""

from kafka_patterns import dlq


def letter(offset: int, reason: str | None, job: str = "content-filter", source: str = "weather.readings"):
    headers = {"job": job, "source.topic": source} | ({"reason": reason} if reason else {})
    return dlq.Letter(0, offset, b"k", b"v", headers)


def test_letters_are_grouped_by_reason_most_frequent_first():
    letters = [letter(0, "not JSON"), letter(1, "ts out of range", job="pipeline-clean"),
               letter(2, "not JSON", job="pipeline-clean"), letter(3, "not JSON"), letter(4, None)]
    groups = dlq.group(letters)
    assert [(g.reason, g.count) for g in groups] == [("not JSON", 3), ("(no reason header)", 1),
                                                     ("ts out of range", 1)]
    assert groups[0].jobs == {"content-filter": 2, "pipeline-clean": 1}
    text = dlq.table(groups)
    assert "not JSON" in text and "content-filter (2), pipeline-clean (1)" in text
