"""The cluster's images as `make image` builds them (build/kube-images.json), run for real.

Most checks run the images with podman (the storage and settings `make image` uses,
under the user-level cache) and need no Kubernetes: the job package and catalogue,
the launcher, Spark and its Kafka connector, the entry point's driver / executor
commands, the operator binary. The last one checks that the local cluster's
containerd holds the images, and skips when that cluster is not running."""

from __future__ import annotations

import collections
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from helpers import ROOT
from kafka_patterns.config import catalogue

VERSIONS = yaml.safe_load((ROOT / "catalogue" / "versions.yml").read_text())
SPARK_VERSION = VERSIONS["spark_version"]
OPERATOR_VERSION = VERSIONS["spark_operator_version"]
KP_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafka-patterns"
PODMAN_DIR = KP_CACHE / "containers"
MANIFEST = ROOT / "build" / "kube-images.json"
CONTAINERD_SOCKET = ROOT / ".run" / "kube" / "containerd" / "containerd.sock"
KEY_LABEL = "io.kafka-patterns.inputs"
EXECUTOR_CLASS = "org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend"
# A jar's artifact: its file name without the version (as the image build compares them).
ARTIFACT = re.compile(r"-[0-9][^-]*\.jar$")

Run = Callable[..., subprocess.CompletedProcess]


def podman_env() -> dict[str, str]:
    return {**os.environ, "CONTAINERS_STORAGE_CONF": str(PODMAN_DIR / "storage.conf"),
            "CONTAINERS_CONF": str(PODMAN_DIR / "containers.conf")}


@pytest.fixture(scope="session")
def images() -> dict[str, dict]:
    """name -> {ref, key, tarball} of the images the last `make image` of this checkout built."""
    if not MANIFEST.is_file():
        pytest.fail(f"no images built in this checkout ({MANIFEST} is missing): run make image")
    built = {i["name"]: i for i in json.loads(MANIFEST.read_text())}
    assert set(built) == {"kafka-patterns-spark", "kafka-patterns-spark-operator",
                          "kafka-patterns-schema-registry", "strimzi-operator", "strimzi-kafka",
                          "strimzi-connect"}, built
    for image in built.values():
        assert Path(image["tarball"]).is_file(), f"{image['tarball']} is missing: run make image"
    return built


@pytest.fixture(scope="session")
def run(images: dict[str, dict]) -> Run:
    """run(name, *args, env={}, user=None, volumes={}, entrypoint=None, read_only=False, timeout=300)
    runs an image; read_only: on a read-only root with /tmp writable, as the chart runs client jobs.

    The image is the one of the manifest (same input key): podman's copy when it is that
    one, else the tarball loaded again. No network: nothing here needs one."""
    if shutil.which("podman") is None or not (PODMAN_DIR / "storage.conf").is_file():
        pytest.fail(f"podman or its settings ({PODMAN_DIR}) are missing: run make image")
    env = podman_env()
    for image in images.values():
        proc = subprocess.run(["podman", "image", "inspect", "--format",
                               '{{ index .Labels "' + KEY_LABEL + '" }}', image["ref"]],
                              capture_output=True, text=True, env=env, timeout=60)
        if proc.returncode != 0 or proc.stdout.strip() != image["key"]:
            subprocess.run(["podman", "load", "--quiet", "--input", image["tarball"]], check=True,
                           capture_output=True, env=env, timeout=600)

    def run_image(name: str, *args: str, env_vars: dict[str, str] | None = None, user: str | None = None,
                  volumes: dict[Path, str] | None = None, entrypoint: str | None = None,
                  read_only: bool = False, timeout: float = 300) -> subprocess.CompletedProcess:
        cmd = ["podman", "run", "--rm", "--network", "none"]
        if read_only:
            cmd += ["--read-only", "--tmpfs", "/tmp"]
        for k, v in (env_vars or {}).items():
            cmd += ["--env", f"{k}={v}"]
        if user is not None:
            cmd += ["--user", user]
        for host, inside in (volumes or {}).items():
            cmd += ["--volume", f"{host}:{inside}:ro"]
        if entrypoint is not None:
            cmd += ["--entrypoint", entrypoint]
        cmd += [images[name]["ref"], *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)

    return run_image


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


# --- the project Spark image ------------------------------------------------------------

def test_runtime_is_what_the_official_image_provides(run: Run) -> None:
    out = ok(run("kafka-patterns-spark", "bash", "-c",
                 'echo "uid=$(id -u) user=$(id -un) home=$SPARK_HOME java_home=$JAVA_HOME cwd=$PWD"; '
                 'java -version 2>&1 | head -1; python3 --version; command -v tini; '
                 'test -x /opt/entrypoint.sh && test -x /opt/decom.sh && echo scripts'))
    assert "uid=185 user=spark home=/opt/spark java_home=/opt/java/openjdk cwd=/opt/spark/work-dir" in out
    assert re.search(r'version "17\.', out), out
    assert re.search(r"Python 3\.1[1-9]", out), out
    assert "/usr/bin/tini" in out and "scripts" in out


def test_job_package_imports_and_finds_the_catalogue(run: Run) -> None:
    script = ("import json; from kafka_patterns.config import catalogue as c; "
              "print(json.dumps({'file': str(c.CATALOGUE_FILE), 'jobs': sorted(c.jobs()), "
              "'spark': c.versions()['spark_version']}))")
    found = json.loads(ok(run("kafka-patterns-spark", "python3", "-c", script)).strip().splitlines()[-1])
    assert found["file"] == "/opt/kafka-patterns/catalogue/catalogue.yaml"
    assert found["jobs"] == sorted(catalogue.jobs())
    assert found["spark"] == SPARK_VERSION


def test_the_image_holds_the_shipped_package_and_not_the_harness_or_the_clis(run: Run) -> None:
    """What a pod runs never imports the test harness (tests/unit/test_package_layers.py
    proves it of the source): here, the image does not even hold it."""
    script = ("import importlib.util as u; "
              "print([m for m in ('kafka_patterns.jobs', 'pattern_harness', 'platform_cli') if u.find_spec(m)])")
    found = ok(run("kafka-patterns-spark", "python3", "-c", script)).strip().splitlines()[-1]
    assert found == "['kafka_patterns.jobs']", found


def test_every_spark_job_starts_through_the_launcher(run: Run) -> None:
    """What a SparkApplication runs: run_job.py <module> (the chart's arguments) with the
    job in KAFKA_PATTERNS_JOB (the chart's env), here with --help: the module, pyspark,
    the job's catalogue entry and its catalogue args load, no Kafka needed."""
    commands = sorted(f"KAFKA_PATTERNS_JOB={shlex.quote(j['name'])} "
                      + shlex.join(["python3", "/opt/spark/work-dir/run_job.py", j["module"]])
                      for j in catalogue.jobs().values() if j["engine"] == "spark")
    assert commands
    loop = "; ".join(f"{c} --help >/dev/null 2>/tmp/err "
                     f"|| {{ echo FAILED {shlex.quote(c)}; cat /tmp/err; }}" for c in commands)
    out = ok(run("kafka-patterns-spark", "bash", "-c", loop))
    assert "FAILED" not in out, out


def test_every_client_job_starts_as_the_chart_runs_it(run: Run) -> None:
    """What a client job's pod runs (values.yaml renders every one): the chart's command
    (tini, python3, the launcher) and arguments, $(POD_NAME) as the kubelet expands it,
    the chart's KAFKA_PATTERNS_JOB, the image's user on a read-only root, with --help:
    the module and every option the chart passes load, no Kafka needed."""
    from test_server_side_apply import RENDER

    objects = RENDER.render(RENDER.values_files()["default"])
    # A job's Deployment's pod template, or its CronJob's Job's (not the canary's, the lag exporter's).
    specs = [o["spec"] for o in objects if o["kind"] in ("Deployment", "CronJob")
             and "kafka-patterns/job" in o["metadata"].get("labels", {})]
    pods = [(s["jobTemplate"]["spec"] if "jobTemplate" in s else s)["template"]["spec"] for s in specs]
    assert len(pods) == len([j for j in catalogue.jobs().values() if j["engine"] == "client"])
    for pod in pods:
        (c,) = pod["containers"]
        job = next(e["value"] for e in c["env"] if e["name"] == "KAFKA_PATTERNS_JOB")
        args = [a.replace("$(POD_NAME)", f"{job}-5d8f7c9b4-x2x9z") for a in c["args"]]
        ok(run("kafka-patterns-spark", *c["command"][1:], *args, "--help", entrypoint=c["command"][0],
               env_vars={"KAFKA_PATTERNS_JOB": job}, read_only=True))


def test_spark_submit_is_the_pinned_version(run: Run) -> None:
    proc = run("kafka-patterns-spark", "/opt/spark/bin/spark-submit", "--version")
    ok(proc)
    assert f"version {SPARK_VERSION}" in proc.stdout + proc.stderr


def test_kafka_connector_jars_are_on_sparks_classpath_once(run: Run) -> None:
    jars = ok(run("kafka-patterns-spark", "ls", "/opt/spark/jars/")).split()
    for artifact in ("spark-sql-kafka-0-10", "spark-token-provider-kafka-0-10"):
        assert f"{artifact}_2.13-{SPARK_VERSION}.jar" in jars
    artifacts = collections.Counter(ARTIFACT.sub("", j) for j in jars if j.endswith(".jar"))
    assert {"kafka-clients", "commons-pool2"} <= set(artifacts)
    assert not [a for a, n in artifacts.items() if n > 1], f"artifacts twice: {artifacts.most_common(5)}"
    # Every artifact of the connector's closure (make setup) is there, Spark's copy or ours.
    closure = {ARTIFACT.sub("", p.name) for p in (ROOT / ".cache" / f"spark-kafka-{SPARK_VERSION}").glob("*.jar")}
    assert closure and closure <= set(artifacts), closure - set(artifacts)


def test_spark_loads_the_kafka_source(run: Run) -> None:
    script = ("from pyspark.sql import SparkSession; "
              "s = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate(); "
              "ds = s._jvm.org.apache.spark.sql.execution.datasources.DataSource; "
              "print('provider', ds.lookupDataSource('kafka', s._jsparkSession.sessionState().conf()).getName()); "
              "s.stop()")
    out = ok(run("kafka-patterns-spark", "python3", "-c", script))
    assert "provider org.apache.spark.sql.kafka010.KafkaSourceProvider" in out


# --- the entry point (driver / executor / pass-through) --------------------------------

@pytest.fixture
def fake_tools(tmp_path: Path) -> Path:
    """A directory with bin/java and bin/spark-submit that print who runs them and their arguments."""
    fake = tmp_path / "fake"
    (fake / "bin").mkdir(parents=True)
    for tool in ("java", "spark-submit"):
        script = fake / "bin" / tool
        script.write_text('#!/bin/sh\necho "uid=$(id -u) parent=$(cat /proc/$PPID/comm)"\n'
                          'for a in "$@"; do printf "arg=%s\\n" "$a"; done\n')
        script.chmod(0o755)
    for d in (fake, fake / "bin"):
        d.chmod(0o755)
    return fake


def argv(out: str) -> list[str]:
    return [line[len("arg="):] for line in out.splitlines() if line.startswith("arg=")]


EXECUTOR_ENV = {
    "SPARK_DRIVER_URL": "spark://CoarseGrainedScheduler@10.0.0.5:7078",
    "SPARK_EXECUTOR_ID": "3",
    "SPARK_EXECUTOR_CORES": "2",
    "SPARK_EXECUTOR_MEMORY": "1024m",
    "SPARK_APPLICATION_ID": "spark-0123abcd",
    "SPARK_EXECUTOR_POD_IP": "10.0.0.7",
    "SPARK_EXECUTOR_POD_NAME": "one-to-one-exec-3",
    "SPARK_RESOURCE_PROFILE_ID": "0",
    "SPARK_CONF_DIR": "/opt/spark/conf",
    "SPARK_CLASSPATH": "/opt/extra/a.jar",
    # Twelve options: numeric order (10 and 11 last), a value with spaces stays one argument.
    **{f"SPARK_JAVA_OPT_{i}": f"-Dopt{i}=v{i}" for i in range(12)},
    "SPARK_JAVA_OPT_1": "-Dspark.executor.extraJavaOptions=-Da=1 -Db=2",
}


def test_entrypoint_executor_builds_the_backend_command(run: Run, fake_tools: Path) -> None:
    out = ok(run("kafka-patterns-spark", "executor", env_vars={**EXECUTOR_ENV, "JAVA_HOME": "/fake"},
                 volumes={fake_tools: "/fake"}))
    assert "uid=185 parent=tini" in out
    opts = [EXECUTOR_ENV[f"SPARK_JAVA_OPT_{i}"] for i in range(12)]
    assert argv(out) == [
        *opts, "-Xms1024m", "-Xmx1024m",
        "-cp", "/opt/spark/conf:/opt/extra/a.jar:/opt/spark/jars/*:/opt/spark/work-dir",
        EXECUTOR_CLASS,
        "--driver-url", "spark://CoarseGrainedScheduler@10.0.0.5:7078", "--executor-id", "3", "--cores", "2",
        "--app-id", "spark-0123abcd", "--hostname", "10.0.0.7", "--resourceProfileId", "0",
        "--podName", "one-to-one-exec-3",
    ]


def test_entrypoint_executor_started_as_root_runs_as_spark(run: Run, fake_tools: Path) -> None:
    out = ok(run("kafka-patterns-spark", "executor", env_vars={**EXECUTOR_ENV, "JAVA_HOME": "/fake"},
                 volumes={fake_tools: "/fake"}, user="0"))
    assert "uid=185 parent=tini" in out


def test_entrypoint_executor_names_missing_variables(run: Run) -> None:
    proc = run("kafka-patterns-spark", "executor", env_vars={"SPARK_EXECUTOR_ID": "1"})
    assert proc.returncode == 64, proc
    assert "SPARK_DRIVER_URL" in proc.stderr and "SPARK_EXECUTOR_POD_IP" in proc.stderr
    assert "SPARK_EXECUTOR_ID" not in proc.stderr.split("needs", 1)[1]


def test_entrypoint_driver_is_client_mode_spark_submit(run: Run, fake_tools: Path) -> None:
    args = ["--properties-file", "/opt/spark/conf/spark.properties", "--class", "org.apache.spark.deploy.PythonRunner",
            "local:///opt/spark/work-dir/run_job.py", "kafka_patterns.jobs.one_to_one", "--available-now"]
    out = ok(run("kafka-patterns-spark", "driver", *args,
                 env_vars={"SPARK_HOME": "/fake", "SPARK_DRIVER_BIND_ADDRESS": "10.0.0.5"},
                 volumes={fake_tools: "/fake"}))
    assert "uid=185 parent=tini" in out
    assert argv(out) == ["--conf", "spark.driver.bindAddress=10.0.0.5",
                         "--conf", "spark.executorEnv.SPARK_DRIVER_POD_IP=10.0.0.5",
                         "--deploy-mode", "client", *args]


def test_entrypoint_passes_other_commands_through(run: Run) -> None:
    assert ok(run("kafka-patterns-spark", "echo", "hello", "from the image")).strip() == "hello from the image"


# --- the spark-operator image ------------------------------------------------------------

def test_operator_binary_runs(run: Run) -> None:
    out = ok(run("kafka-patterns-spark-operator", "version"))
    assert f"Git Version: v{OPERATOR_VERSION}" in out


def test_operator_image_has_spark_submit_and_a_writable_cert_dir(run: Run) -> None:
    out = ok(run("kafka-patterns-spark-operator", "-c",
                 "id -u; test -w /etc/k8s-webhook-server/serving-certs && echo certs-writable; "
                 "command -v tini; /opt/spark/bin/spark-submit --version 2>&1",
                 entrypoint="/bin/bash"))
    assert out.split()[:3] == ["185", "certs-writable", "/usr/bin/tini"]
    assert f"version {SPARK_VERSION}" in out


# --- the schema registry image ------------------------------------------------------------

def test_registry_image_runs_the_distribution_on_java_21_as_an_unprivileged_user(run: Run) -> None:
    out = ok(run("kafka-patterns-schema-registry", "-c",
                 "id -u; /opt/java/bin/java -version 2>&1 | head -1; ls /opt/apicurio-registry/quarkus-run.jar",
                 entrypoint="/bin/sh"))
    uid, java, jar = out.splitlines()[:3]
    assert uid == "1001"
    assert re.search(r'version "21[.]', java), java
    assert jar == "/opt/apicurio-registry/quarkus-run.jar"


# --- the Strimzi images, built from source ---------------------------------------------

def test_the_strimzi_operator_image_has_every_operator_on_java_21_with_openssl(run: Run) -> None:
    out = ok(run("strimzi-operator", "bash", "-c",
                 "id -u; java -version 2>&1 | head -1; openssl version; command -v tini; ls bin; "
                 "ls lib | wc -l; "
                 "unzip -l lib/io.strimzi.cluster-operator-*.jar | grep -c 'kafka-.*-config-model.json'"))
    uid, java, openssl, tini, *rest = out.splitlines()
    assert uid == "1001"
    assert re.search(r'version "21[.]', java), java
    assert openssl.startswith("OpenSSL") and tini == "/usr/bin/tini"
    assert {"cluster_operator_run.sh", "topic_operator_run.sh", "user_operator_run.sh", "kafka_init_run.sh",
            "launch_java.sh"} <= set(rest)
    jars, models = int(rest[-2]), int(rest[-1])
    # The operator validates a Kafka CR against the config model of its Kafka version:
    # one per supported version (4.2.0, 4.2.1, 4.3.0, 4.3.1).
    assert jars > 100 and models >= 4, out


def test_the_strimzi_kafka_image_formats_kraft_storage_through_its_launchers(run: Run) -> None:
    out = ok(run("strimzi-kafka", "bash", "-c",
                 "id -u; pwd; ./bin/kafka-storage.sh random-uuid; "
                 "ls libs | grep -E '^(kafka-agent|tracing-agent)[.]jar$'; "
                 "ls kafka_run.sh kafka_connect_run.sh kafka_readiness.sh; ls $JMX_EXPORTER_HOME"))
    uid, cwd, cluster_id, *rest = out.splitlines()
    assert (uid, cwd) == ("1001", "/opt/kafka")
    assert re.fullmatch(r"[-_A-Za-z0-9]{22}", cluster_id), cluster_id
    assert {"kafka-agent.jar", "tracing-agent.jar", "kafka_run.sh", "kafka_connect_run.sh"} <= set(rest)
    assert any(line.startswith("jmx_prometheus_javaagent-") for line in rest), rest


def test_the_connect_image_carries_the_debezium_plugins(run: Run) -> None:
    out = ok(run("strimzi-connect", "bash", "-c", "ls /opt/kafka/plugins; ls /opt/kafka/plugins/*/ | grep -c jar"))
    assert {"debezium-connector-postgres", "debezium-connector-jdbc"} <= set(out.splitlines())


# --- the local cluster -------------------------------------------------------------------

def test_images_are_in_containerd(images: dict[str, dict]) -> None:
    if not CONTAINERD_SOCKET.is_socket():
        pytest.skip(f"the local cluster is not running ({CONTAINERD_SOCKET} is absent): "
                    "make kube-up loads the images")
    proc = subprocess.run(["ctr", "--address", str(CONTAINERD_SOCKET), "--namespace", "k8s.io", "images", "list"],
                          capture_output=True, text=True, timeout=60)
    held = {line.split()[0]: line for line in ok(proc).splitlines()[1:]}
    for image in images.values():
        assert image["ref"] in held, f"{image['ref']} is not in containerd (k8s.io): run make image"
        assert f"{KEY_LABEL}={image['key']}" in held[image["ref"]], (
            f"containerd holds another build of {image['ref']}: run make image")
