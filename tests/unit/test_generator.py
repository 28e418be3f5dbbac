"""The generator's readings keep the readings contract, whatever the random draw: a
generated reading dead-lettered as bad would count as lost in the scenarios."""

import random

from kafka_patterns.runtime import readings
from pattern_harness import generator


class ExtremeGauss(random.Random):
    """A random generator whose Gaussian draws are far out in the tails (±10 sigma)."""

    def __init__(self, sign: float) -> None:
        super().__init__(1)
        self.sign = sign

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        return mu + self.sign * 10 * sigma


def test_every_sensor_reading_keeps_the_contract_even_at_ten_sigma():
    for sign in (1.0, -1.0):
        rng = ExtremeGauss(sign)
        for seq in range(20):  # every sensor's base temperature
            r = generator.make_reading("r", seq, 20, 4, rng, now_ms=1_800_000_000_000)
            reading, reason = readings.parse(r.to_json())
            assert reason is None, (r, reason)
            assert reading == r


def test_seeded_readings_keep_the_contract():
    rng = random.Random(7)
    bad = [(r, reason) for r in (generator.make_reading("r", i, 20, 4, rng, 1_800_000_000_000)
                                 for i in range(50_000))
           if (reason := readings.parse(r.to_json())[1]) is not None]
    assert bad == []
