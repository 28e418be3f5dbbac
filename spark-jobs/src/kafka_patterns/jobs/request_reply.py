"""request-reply: requesters put a correlation id and a reply-to topic in each
request's headers; this responder answers each request on its reply-to topic with the
same correlation id. Replies and the request offsets are committed in one Kafka
transaction, so a responder killed and restarted still sends exactly one (committed)
reply per request.

Request value: {"sensor": "sensor-03", "celsius": 21.5}; reply: {"sensor": ..., "fahrenheit": 70.7}.

    python -m kafka_patterns.jobs.request_reply [--group G] [--instance-id ID]
"""

from __future__ import annotations

import json
import sys

from confluent_kafka import Message

from kafka_patterns.jobs import base, client

JOB = "request-reply"


def answer(request: bytes) -> bytes:
    """The service itself: Celsius to Fahrenheit; a bad request gets an error reply."""
    try:
        body = json.loads(request)
        return json.dumps({"sensor": body["sensor"], "fahrenheit": round(body["celsius"] * 9 / 5 + 32, 2)}).encode()
    except (ValueError, KeyError, TypeError) as e:
        return json.dumps({"error": f"bad request: {e}"}).encode()


def reply_headers(headers: list[tuple[str, bytes]] | None, default_reply_to: str) -> tuple[str, list]:
    """(reply topic, headers of the reply) from a request's headers."""
    h = dict(headers or [])
    reply_to = h.get("reply-to", default_reply_to.encode()).decode()
    return reply_to, [("correlation-id", h.get("correlation-id", b""))]


def main(argv: list[str] | None = None) -> int:
    p = client.parser(JOB, __doc__)
    p.add_argument("--transactional-id", default=JOB)
    args = p.parse_args(argv)
    (requests,), (replies,) = base.input_topics(JOB), base.output_topics(JOB)

    def reply(m: Message) -> tuple[str, bytes, list]:
        topic, headers = reply_headers(m.headers(), replies)
        return topic, answer(m.value()), headers

    client.consume_transform_produce(args, requests, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
