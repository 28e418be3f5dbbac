"""No record stops a job: every pattern that reads readings is run with each kind of bad
record (pattern_harness.bad_input: 42 kinds, the three former poison records included)
mixed into its input. Its good readings must all be written as its promise says, each
bad record dead-lettered by each of its jobs with the contract's reason and its own
bytes, and no job may crash."""

import pytest

from helpers import one_run_at_a_time
from platform_cli import bad_input_suite

PATTERNS = [pytest.param(key, marks=one_run_at_a_time(key)) for key in bad_input_suite.patterns()]


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS)
def test_bad_records_are_dead_lettered_and_the_pattern_goes_on(cluster, pattern):
    result = bad_input_suite.run_pattern(pattern)
    print(f"\n{bad_input_suite.table([result])}")
    assert result.error is None, f"the run crashed: {result.error}"
    assert result.outcome.verdict == "PASS", result.outcome.failures()
    assert result.reports, "no bad record reached a dead-lettering job"
    for report in result.reports.values():
        assert report.expected >= 36, report
        assert (report.missing, report.wrong_reason, report.wrong_value) == ([], [], []), report
        assert report.lettered == report.expected


def test_every_job_that_reads_readings_dead_letters_and_is_in_the_suite():
    from kafka_patterns.config import catalogue
    from pattern_harness import bad_input, scenarios

    readers = [j for j, spec in catalogue.jobs().items()
               if any(catalogue.schema_of(t) == "reading" for t in spec["inputs"])]
    copiers = {"exactly-once-copier"}  # copies bytes verbatim, reads no reading
    assert set(bad_input.lettering_readers(readers)) == set(readers) - copiers
    covered = {j for key in bad_input_suite.patterns() for j in scenarios.modules()[key].JOBS}
    assert set(readers) - copiers <= covered
