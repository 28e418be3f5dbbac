"""The example domain: weather-station readings, keyed by sensor id.

A reading is a JSON object:
    {"run": "<id of the producing run>", "sensor": "sensor-07", "station": "station-2",
     "seq": 1234, "temperature": 21.5, "humidity": 40.2, "ts": <event time, epoch ms>}
`run` + `seq` identify a record for delivery accounting (seq grows per run, so it
also grows per key). Plain Python here; the Spark schema is built on demand.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

FIELDS = ("run", "sensor", "station", "seq", "temperature", "humidity", "ts")
# Plausible physical range; outside it a reading is malformed (dead-letter).
TEMPERATURE_RANGE = (-60.0, 60.0)
HUMIDITY_RANGE = (0.0, 100.0)


@dataclass(frozen=True)
class Reading:
    run: str
    sensor: str
    station: str
    seq: int
    temperature: float
    humidity: float
    ts: int

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @property
    def record_id(self) -> tuple[str, int]:
        return (self.sensor, self.seq)


def station_of(sensor_number: int, stations: int) -> str:
    return f"station-{sensor_number % stations}"


def parse(value: bytes | str | None) -> tuple[Reading | None, str | None]:
    """(reading, None) or (None, reason): never raises on bad input."""
    if value is None:
        return None, "empty value"
    try:
        data: Any = json.loads(value)
    except (ValueError, UnicodeDecodeError) as e:
        return None, f"not JSON: {e}"
    if not isinstance(data, dict):
        return None, "not a JSON object"
    missing = [f for f in FIELDS if data.get(f) is None]
    if missing:
        return None, "missing " + ", ".join(missing)
    try:
        reading = Reading(str(data["run"]), str(data["sensor"]), str(data["station"]), int(data["seq"]),
                          float(data["temperature"]), float(data["humidity"]), int(data["ts"]))
    except (TypeError, ValueError) as e:
        return None, f"wrong type: {e}"
    if not TEMPERATURE_RANGE[0] <= reading.temperature <= TEMPERATURE_RANGE[1]:
        return None, "temperature out of range"
    if not HUMIDITY_RANGE[0] <= reading.humidity <= HUMIDITY_RANGE[1]:
        return None, "humidity out of range"
    return reading, None


def spark_schema():
    """The Spark StructType of a reading (pyspark imported only by Spark jobs)."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    types = {"seq": LongType(), "ts": LongType(), "temperature": DoubleType(), "humidity": DoubleType()}
    return StructType([StructField(f, types.get(f, StringType())) for f in FIELDS])
