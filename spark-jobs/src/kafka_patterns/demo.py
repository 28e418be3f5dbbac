"""`make demo`: run the catalogue's checks on the local cluster and print one table.

Until every pattern job exists, the demo runs what does: the foundation smoke check
(acks=all, idempotent, RF 3), and reports each result against its promise.
"""

from __future__ import annotations

import sys
import time

from tabulate import tabulate

from kafka_patterns import inventory, smoke


def main() -> int:
    cluster = inventory.load()
    print(f"==> cluster: {len(cluster.nodes)} KRaft nodes at {cluster.bootstrap_servers}, "
          f"Connect at {cluster.connect_url}, PostgreSQL at {cluster.postgres_host}:{cluster.postgres_port}")
    rows = []
    print("==> smoke: 10,000 records, acks=all + idempotence, RF 3 ...", flush=True)
    t0 = time.monotonic()
    result = smoke.run(records=10_000)
    d = result.delivery
    rows.append(["smoke (acks=all, idempotent)", d.acked, d.received, d.lost, d.duplicated,
                 d.reordered, "PASS" if result.ok else "FAIL", f"{time.monotonic() - t0:.1f}"])
    print(tabulate(rows, headers=["pattern", "in", "out", "lost", "duplicated", "reordered", "verdict", "seconds"]))
    return 0 if all(r[6] == "PASS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
