"""request-reply: requesters put a correlation id and a reply-to topic in each
request's headers; this responder answers each request on its reply-to topic with the
same correlation id. Replies and the request offsets are committed in one Kafka
transaction, so a responder killed and restarted still sends exactly one (committed)
reply per request.

Request value: {"sensor": "sensor-03", "celsius": 21.5}; reply: {"sensor": ..., "fahrenheit": 70.7}.
A bad request is answered, not dropped: the requester is waiting, so it gets an error
reply ({"error": ...}) instead of a dead letter. A reply-to that is not one of the
service's reply topics (catalogue outputs) is answered on the default reply topic with
an error: writing where the job may not would abort every transaction with that
request in it, and the responder would never get past it.

    python -m kafka_patterns.jobs.request_reply --job request-reply [--group G] [--instance-id ID]
"""

from __future__ import annotations

import json
import sys

from confluent_kafka import Message

from kafka_patterns.jobs import base, client


def answer(request: bytes) -> bytes:
    """The service itself: Celsius to Fahrenheit; a bad request gets an error reply."""
    try:
        body = json.loads(request)
        return json.dumps({"sensor": body["sensor"], "fahrenheit": round(body["celsius"] * 9 / 5 + 32, 2)}).encode()
    except (ValueError, KeyError, TypeError, OverflowError) as e:  # OverflowError: a huge integer
        return json.dumps({"error": f"bad request: {e}"}).encode()


def reply_headers(headers: list[tuple[str, bytes]] | None, reply_topics: list[str]) -> tuple[str, list, str | None]:
    """(reply topic, headers of the reply, error) from a request's headers: its reply-to
    when that is one of reply_topics (the first is the default), else the default and
    an error naming the refused reply-to."""
    h = dict(headers or [])
    wanted = h.get("reply-to", reply_topics[0].encode()).decode(errors="replace")
    reply = [("correlation-id", h.get("correlation-id", b""))]
    if wanted not in reply_topics:
        return reply_topics[0], reply, f"bad request: reply-to {wanted!r} is not a reply topic of this service"
    return wanted, reply, None


def main(argv: list[str] | None = None) -> int:
    job = base.job_spec(argv, __spec__.name)
    p = client.parser(job, __doc__)
    p.add_argument("--transactional-id", default=job.name)
    args = p.parse_args(argv)
    (requests,), replies = job.inputs, list(job.output_topics)

    def reply(m: Message) -> tuple[str, bytes, list]:
        topic, headers, error = reply_headers(m.headers(), replies)
        return topic, json.dumps({"error": error}).encode() if error else answer(m.value()), headers

    client.consume_transform_produce(args, requests, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
