"""Run inside a pod of the project image (tests/kube/test_schema_registry.py passes this
file's text to `python3 -c`): what a job on the cluster sees of the chart's schema
registry through its Service, with the project CA. Prints one JSON object.

Environment: SCHEMA_REGISTRY_URL, SCHEMA_REGISTRY_CA_FILE, PROBE_DIR (admin.password,
reader.password), PROBE_GROUP (a throwaway artifact group)."""

import json
import os
import ssl
import urllib.error
import urllib.request
from pathlib import Path

from kafka_patterns.clients import registry
from kafka_patterns.clients.registry import Registry, RegistryError, RegistryRefused

URL = os.environ["SCHEMA_REGISTRY_URL"]
CA = Path(os.environ["SCHEMA_REGISTRY_CA_FILE"])
PROBE = Path(os.environ["PROBE_DIR"])
V1 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": False,
      "properties": {"name": {"type": "string"}}, "required": ["name"]}
BREAKING = {**V1, "properties": {"name": {"type": "integer"}}}


def as_user(user: str, password: str, group: str = registry.GROUP) -> Registry:
    return Registry(URL, user, password, CA, group=group)


def status_of(request: urllib.request.Request, context: ssl.SSLContext | None) -> int | str:
    try:
        with urllib.request.urlopen(request, timeout=15, context=context) as answer:
            return answer.status
    except urllib.error.HTTPError as e:
        return e.code
    except (urllib.error.URLError, ConnectionError, OSError) as e:
        return f"no HTTP answer: {type(e).__name__}"


def refusal(call) -> str:
    try:
        call()
    except RegistryRefused as e:
        return f"refused {e.status}: {e}"
    except RegistryError as e:
        return f"refused: {e}"
    return "accepted"


admin = as_user("registry-admin", (PROBE / "admin.password").read_text().strip())
reader = as_user("registry-reader", (PROBE / "reader.password").read_text().strip())
context = ssl.create_default_context(cafile=str(CA))
info = URL.rstrip("/") + registry.API + "/system/info"
result = {
    "synced": registry.sync(admin),
    "reader_reads": reader.call("GET", reader.path("reading", "versions"))[0],
    "reading_v1_id": reader.id_of("reading", 1),
    "reader_writes": refusal(lambda: as_user(reader.user, reader.password, os.environ["PROBE_GROUP"])
                             .register("probe", 1, V1)),
    "anonymous": status_of(urllib.request.Request(info), context),
    "wrong_password": refusal(lambda: as_user("registry-reader", "not-the-password").call("GET", "/system/info")),
    "plain_http": status_of(urllib.request.Request(info.replace("https://", "http://", 1)), None),
}
probes = as_user(admin.user, admin.password, os.environ["PROBE_GROUP"])
result["compatible_first_version"] = refusal(lambda: probes.register("probe", 1, V1))
result["breaking_version"] = refusal(lambda: probes.register("probe", 2, BREAKING))
print(json.dumps(result))
