"""make client-config USER=<name>: a properties file for Kafka's Java tools as a
catalogue user (0600), and the kcat flags; the password is read from its file, never
printed.

    python -m platform_cli.client_config <user>
"""

from __future__ import annotations

import sys

from kafka_patterns.clients import kafka
from kafka_patterns.config import credentials


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m platform_cli.client_config <user>  (make client-config USER=<user>)", file=sys.stderr)
        return 2
    user = argv[0]
    try:
        path = credentials.java_properties(user)
    except credentials.CredentialsError as e:
        print(e, file=sys.stderr)
        return 1
    bootstrap = kafka.bootstrap_servers()
    print(f"# {path} (mode 0600): Kafka's Java tools as {user}, e.g.\n"
          f"#   kafka-topics.sh --bootstrap-server {bootstrap} --command-config {path} --list\n"
          f"kcat -b {bootstrap} {credentials.kcat_flags(user)} -L")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
