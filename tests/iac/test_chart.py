"""The chart itself: the pinned helm lints it clean, its values schema is current and
enforced, its objects carry no namespace and fit Kubernetes' name limits, and
`make render` writes one file per object."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml
from manifests import CHART_DIR, NAMESPACE, ROOT, VARIANTS, load_module, render_tool

DNS_LABEL_MAX = 63


def test_helm_is_the_pinned_version(helm, versions):
    go = shutil.which("go") or shutil.which("/usr/local/go/bin/go")
    if go is None:
        pytest.skip("go is not installed: cannot read the module version helm was built from")
    info = subprocess.run([go, "version", "-m", str(helm)], capture_output=True, text=True, check=True).stdout
    assert f"\tmod\thelm.sh/helm/v4\t{versions['helm_version']}\t" in info


@pytest.mark.parametrize("variant", VARIANTS)
def test_helm_lint_is_clean(helm, variant):
    values = render_tool.values_files()[variant]
    proc = subprocess.run([str(helm), "lint", "--strict", str(CHART_DIR), "--namespace", NAMESPACE,
                           *render_tool.helm_args(values)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[WARNING]" not in proc.stdout and "[ERROR]" not in proc.stdout, proc.stdout


def test_the_values_schema_is_generated_from_the_catalogue_schema():
    tool = load_module("kp_chart_schema", ROOT / "helm" / "tools" / "chart_schema.py")
    assert tool.main(["--check"]) == 0, "run: .venv/bin/python helm/tools/chart_schema.py"


def test_the_values_schema_rejects_a_bad_value(helm):
    values = render_tool.values_files()["dev"]
    proc = subprocess.run([str(helm), "template", "x", str(CHART_DIR), *render_tool.helm_args(values),
                           "--set", "spark.scheduled.concurrencyPolicy=Sometimes"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    assert "concurrencyPolicy" in proc.stderr


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_object_hard_codes_a_namespace(rendered, variant):
    assert not [o["metadata"]["name"] for o in rendered[variant] if "namespace" in o["metadata"]]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_name_fits_a_dns_label(rendered, variant):
    long = [(o["kind"], o["metadata"]["name"]) for o in rendered[variant]
            if len(o["metadata"]["name"]) > DNS_LABEL_MAX]
    assert not long
    labels = [v for o in rendered[variant] for v in o["metadata"].get("labels", {}).values()]
    assert all(len(str(v)) <= DNS_LABEL_MAX for v in labels)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_object_is_labelled_as_part_of_the_platform(rendered, variant):
    assert all(o["metadata"]["labels"]["app.kubernetes.io/part-of"] == "kafka-patterns" for o in rendered[variant])


@pytest.mark.parametrize("variant", VARIANTS)
def test_names_are_unique_per_kind(rendered, variant):
    keys = [(o["kind"], o["metadata"]["name"]) for o in rendered[variant]]
    assert len(keys) == len(set(keys))


def test_make_render_writes_one_file_per_object(rendered, tmp_path, capsys):
    assert render_tool.main(["--out", str(tmp_path), "--namespace", NAMESPACE]) == 0
    printed = capsys.readouterr().out
    for variant, objects in rendered.items():
        files = sorted((tmp_path / variant).glob("*.yaml"))
        assert [yaml.safe_load(f.read_text()) for f in files] == objects
        assert f"{variant}: {len(objects)} objects" in printed
