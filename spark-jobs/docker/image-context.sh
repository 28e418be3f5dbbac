#!/bin/bash
# Assemble the build context of spark-jobs/Dockerfile (the project Spark image) in
# OUT_DIR, from this checkout. `make image` runs it; with Docker and a registry:
#   spark-jobs/docker/image-context.sh build/image-context
#   docker build -f spark-jobs/Dockerfile --build-arg SPARK_VERSION=<spark_version> \
#     -t kafka-patterns-spark:<spark_version> build/image-context
#
# Needs `make setup` first: the Kafka connector jars in .cache/spark-kafka-<v>/ and
# pyspark in the venv (its jars directory is the image's /opt/spark/jars: only the
# connector jars whose artifact it lacks are copied, so no artifact is there twice).
# Environment: PYTHON (default .venv/bin/python), IMAGE_PY_DEPS (the runtime Python
# packages of the jobs, an extended regex over python_packages names in versions.yml).
# Prints one summary line on stderr; the context is rebuilt from scratch every run and
# its files are normalised (mode, no __pycache__) so that its content hash is stable.
set -euo pipefail

out=${1:?usage: image-context.sh OUT_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
versions=$root/ansible/versions.yml
python=${PYTHON:-$root/.venv/bin/python}
deps=${IMAGE_PY_DEPS:-confluent-kafka|psycopg|psycopg-binary|pyyaml|jsonschema}
spark_version=$(sed -nE 's/^spark_version: *"([^"]+)".*/\1/p' "$versions")
jar_dir=$root/.cache/spark-kafka-$spark_version

[ -x "$python" ] || { echo "no Python at $python: run make setup" >&2; exit 1; }
ls "$jar_dir"/*.jar >/dev/null 2>&1 || { echo "no jars in $jar_dir: run make setup" >&2; exit 1; }
pyspark_jars=$("$python" -c 'import pathlib, pyspark; print(pathlib.Path(pyspark.__file__).parent / "jars")') \
  || { echo "pyspark is not importable with $python: run make setup" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/spark-kafka-jars"
cp -r "$root/spark-jobs/src/kafka_patterns" "$out/"
find "$out/kafka_patterns" \( -name __pycache__ -o -name '*.pyc' \) -prune -exec rm -rf {} +
cp "$root/spark-jobs/catalogue.yaml" "$root/spark-jobs/catalogue.schema.json" "$out/"
cp "$versions" "$out/versions.yml"
cp "$root/spark-jobs/docker/run_job.py" "$out/"

# Only the connector jars whose artifact (file name without the version) pyspark's
# jars directory lacks.
for jar in "$jar_dir"/*.jar; do
  artifact=$(basename "$jar" | sed -E 's/-[0-9][^-]*\.jar$//')
  ls "$pyspark_jars/$artifact"-[0-9]*.jar >/dev/null 2>&1 || cp "$jar" "$out/spark-kafka-jars/"
done

sed -nE '/^python_packages:/,/^[^ #]/s/^  ('"$deps"'): *"([^"]*)".*/\1==\2/p' "$versions" >"$out/requirements.txt"

find "$out" -type d -exec chmod 0755 {} +
find "$out" -type f -exec chmod 0644 {} +
echo "image context $out: Kafka jars $(cd "$out/spark-kafka-jars" && ls | tr '\n' ' ')" >&2
