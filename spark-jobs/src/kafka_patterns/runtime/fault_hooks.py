"""The faults a job injects into itself when the harness asks (tests only; a deployed
job never sets them): the harness (pattern_harness.job_runs) sets the variable, the job
checks it, both read these names from here so the image needs no harness code."""

# Exit right after this micro-batch's sink write, before its checkpoint commit (the
# worst case for duplicates): the micro-batch number.
CRASH_AFTER_BATCH = "KP_CRASH_AFTER_BATCH"
# The exit status of that crash (os._exit, as the OOM killer's SIGKILL shows in a pod).
CRASH_EXIT_CODE = 137
