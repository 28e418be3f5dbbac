"""The build context of spark-jobs/Dockerfile (the project Spark image), from this checkout.

    .venv/bin/python spark-jobs/tools/image_context.py build/image-context

`make image` runs it (role kube_images); with Docker and a registry, run it yourself,
then the `docker build` command it prints. Needs `make setup` first: the Kafka
connector jars in .cache/spark-kafka-<spark_version>/ and pyspark in the venv (its jars
directory is the image's /opt/spark/jars: only the connector jars whose artifact it
lacks are copied, so no artifact is there twice). The context is made again from
scratch every run and its files normalised (modes, no __pycache__), so that its
content hash, the image's cache key, changes only with its inputs.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

import pins

ROOT = pins.ROOT
SPARK_JOBS = ROOT / "spark-jobs"
PACKAGE = SPARK_JOBS / "src" / "kafka_patterns"
CACHE = ROOT / ".cache"
CHART_VALUES = ROOT / "helm" / "kafka-patterns" / "values.yaml"
# The declarations every job reads (the catalogue and its schema, versions.yml, the
# record schemas, the SQL streams' queries), whole: the Dockerfile puts the folder back
# at its place in the checkout's layout.
DECLARATIONS = ROOT / "catalogue"
LAUNCHER = SPARK_JOBS / "docker" / "run_job.py"
# A jar name's version suffix; the rest is its artifact (kafka-clients-3.9.2.jar -> kafka-clients).
JAR_VERSION = re.compile(r"-[0-9][^-]*\.jar$")


def pyspark_jars() -> Path:
    """The jars directory of the venv's pyspark, found without importing pyspark."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        raise pins.ToolError(f"pyspark is not importable with {sys.executable}: run make setup "
                            "(then use .venv/bin/python)")
    return Path(spec.origin).parent / "jars"


def connector_jars(spark_version: str) -> list[Path]:
    """The jars of Spark's Kafka connector (make setup) whose artifact pyspark lacks."""
    jar_dir = CACHE / f"spark-kafka-{spark_version}"
    jars = sorted(jar_dir.glob("*.jar"))
    if not jars:
        raise pins.ToolError(f"no jars in {jar_dir}: run make setup")
    spark_jars = pyspark_jars()
    return [j for j in jars if not any(spark_jars.glob(JAR_VERSION.sub("", j.name) + "-[0-9]*.jar"))]


def build(out: Path) -> list[Path]:
    """Make the context in `out` (replacing it); returns the connector jars it holds."""
    if out.resolve() in (ROOT, *ROOT.parents):
        raise pins.ToolError(f"{out} holds the checkout: give an empty or build directory")
    jars = connector_jars(pins.pin("spark_version"))
    requirements = pins.runtime()
    if out.exists():
        shutil.rmtree(out)
    (out / "spark-kafka-jars").mkdir(parents=True)
    shutil.copytree(PACKAGE, out / "kafka_patterns", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copytree(DECLARATIONS, out / "catalogue", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copyfile(LAUNCHER, out / LAUNCHER.name)
    for jar in jars:
        shutil.copyfile(jar, out / "spark-kafka-jars" / jar.name)
    (out / "requirements.txt").write_text("".join(f"{r}\n" for r in requirements))
    for path in [out, *out.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return jars


def docker_build_command(context: Path) -> str:
    """`docker build` of the project image (paths from the current directory), tagged as
    the chart names the image by default (values.yaml spark.image.repository)."""
    spark_version = pins.pin("spark_version")
    repository = pins.load_yaml(CHART_VALUES)["spark"]["image"]["repository"]
    return (f"docker build -f {os.path.relpath(SPARK_JOBS / 'Dockerfile')} --build-arg SPARK_VERSION={spark_version}"
            f" -t {repository}:{spark_version} {os.path.relpath(context)}")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0])
    try:
        jars = build(out)
        print(f"image context {out}: Kafka jars {' '.join(j.name for j in jars)}", file=sys.stderr)
        print(docker_build_command(out))
    except pins.ToolError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
