"""Run a kafka_patterns job module as __main__ with the remaining arguments.

The launcher every SparkApplication names as mainApplicationFile (helm values
spark.launcher, local:///opt/spark/work-dir/run_job.py): `run_job.py <module> [args...]`
is `python -m <module> [args...]`.
"""

import runpy
import sys

if len(sys.argv) < 2:
    sys.exit("usage: run_job.py <module> [args...]")
module = sys.argv[1]
sys.argv = [module, *sys.argv[2:]]
runpy.run_module(module, run_name="__main__", alter_sys=True)
