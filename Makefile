# Kafka pattern platform: the one entry point. `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

ROOT      := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VERSIONS  := $(ROOT)/ansible/versions.yml
VENV      := $(ROOT)/.venv
PY        := $(VENV)/bin/python
CACHE     := $(ROOT)/.cache
INVENTORY ?= $(ROOT)/ansible/inventories/local

# A flat "key: value" from versions.yml (quoted values), readable before PyYAML exists.
pin = $(shell sed -nE 's/^$(1): *"([^"]+)".*/\1/p' $(VERSIONS))
SPARK_VERSION := $(call pin,spark_version)

export ANSIBLE_CONFIG := $(ROOT)/ansible/ansible.cfg
export PATH := $(VENV)/bin:$(PATH)
export PYTHONPATH := $(ROOT)/spark-jobs/src

PLAYBOOK := ansible-playbook -i $(INVENTORY)

.PHONY: help setup up down clean status bootstrap demo patterns run test test-unit test-infra test-integration test-faults lint

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

# --- setup ------------------------------------------------------------------
# Stamps make a second `make setup` a no-op until versions.yml or the setup roles change.
SETUP_INPUTS := $(VERSIONS) $(ROOT)/ansible/playbooks/setup.yml \
	$(shell find $(ROOT)/ansible/roles/toolchain $(ROOT)/ansible/roles/artifact_cache -type f 2>/dev/null)

setup: $(VENV)/.installed $(CACHE)/setup.stamp ## install everything (venv, Debian packages, Maven artifacts); quick when done

$(VENV)/.installed: $(VERSIONS)
	@echo "==> Python virtualenv $(VENV)" >&2
	@python3 -c 'import ensurepip, venv' 2>/dev/null || { \
	  echo "    python3-venv is missing: installing it with apt-get" >&2; \
	  $$( [ $$(id -u) = 0 ] || echo sudo ) apt-get update -qq && \
	  $$( [ $$(id -u) = 0 ] || echo sudo ) apt-get install -y -qq python3-venv >/dev/null; }
	@test -x $(PY) || python3 -m venv $(VENV)
	@# python_packages in versions.yml -> requirements (name==version); pyspark follows spark_version.
	@{ sed -n '/^python_packages:/,/^[^ #]/s/^  \([A-Za-z0-9_.-]*\): *"\([^"]*\)".*/\1==\2/p' $(VERSIONS); \
	   echo "pyspark==$(SPARK_VERSION)"; } > $(VENV)/requirements.txt
	@echo "    pip install $$(wc -l < $(VENV)/requirements.txt) pinned packages (pyspark is a ~450 MB download the first time)" >&2
	@$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	@$(PY) -m pip install -q --disable-pip-version-check --progress-bar off -r $(VENV)/requirements.txt >&2
	@touch $@

$(CACHE)/setup.stamp: $(VENV)/.installed $(SETUP_INPUTS)
	@echo "==> Debian packages and Maven artifacts (ansible/playbooks/setup.yml)" >&2
	@$(PLAYBOOK) $(ROOT)/ansible/playbooks/setup.yml >&2
	@mkdir -p $(CACHE) && touch $@

# --- the local cluster --------------------------------------------------------
up: setup ## start 3 KRaft nodes, Connect and PostgreSQL (idempotent)
	@$(PLAYBOOK) $(ROOT)/ansible/playbooks/site.yml

down: setup ## stop everything `make up` started; data is kept
	@$(PLAYBOOK) $(ROOT)/ansible/playbooks/stop.yml

clean: ## stop everything and remove the data (the download cache stays)
	@if [ -x $(PY) ]; then $(PLAYBOOK) $(ROOT)/ansible/playbooks/stop.yml -e purge_data=true; fi
	@rm -rf $(ROOT)/.run

status: setup ## nodes and roles, quorum, topics with ISR, Connect plugins, PostgreSQL
	@$(PY) -m kafka_patterns.status

bootstrap: setup ## print the bootstrap servers (use with make -s)
	@$(PY) -m kafka_patterns.inventory bootstrap

demo: up ## bring the cluster up, run every pattern end to end, print one table
	@$(PY) -m kafka_patterns.demo

patterns: setup ## list the patterns with their jobs and promised semantics
	@$(PY) -m kafka_patterns.run --list

run: setup ## run one pattern end to end: make run PATTERN=<name> (see make patterns)
	@test -n "$(PATTERN)" || { echo "PATTERN is not set: make run PATTERN=<name>; make patterns lists the names" >&2; exit 2; }
	@$(PY) -m kafka_patterns.inventory is-up 2>/dev/null || $(MAKE) up
	@$(PY) -m kafka_patterns.run $(PATTERN)

# --- tests --------------------------------------------------------------------
PYTEST := $(PY) -m pytest -c $(ROOT)/tests/pytest.ini --rootdir $(ROOT)

test: setup ## every test tier; starts the cluster if needed and stops what it started
	@started=no; \
	if ! $(PY) -m kafka_patterns.inventory is-up; then $(MAKE) up; started=yes; fi; \
	rc=0; $(MAKE) -k test-iac test-unit test-infra test-integration test-faults || rc=$$?; \
	if [ $$started = yes ]; then echo "==> stopping the cluster this run started"; $(MAKE) down; fi; \
	exit $$rc

test-unit: setup ## unit tests and the clear-error checks (no cluster needed)
	@$(PYTEST) $(ROOT)/tests/unit

test-infra: setup ## testinfra checks of the running cluster through the Ansible inventory
	@$(PYTEST) $(ROOT)/tests/infra --ansible-inventory=$(INVENTORY)

test-integration: setup ## guarantee tests against the running cluster
	@$(PYTEST) $(ROOT)/tests/integration

test-faults: setup ## fault injection (jobs and consumers killed mid-stream) against the running cluster
	@$(PYTEST) $(ROOT)/tests/faults

lint: setup ## ruff and ansible-lint
	@ruff check --config $(ROOT)/spark-jobs/pyproject.toml $(ROOT)/spark-jobs $(ROOT)/tests $(ROOT)/ansible $(ROOT)/bench $(ROOT)/pulumi $(ROOT)/helm
	@cd $(ROOT)/ansible && ansible-lint -q playbooks roles

# --- Kubernetes path ---
# STACK picks pulumi/Pulumi.<stack>.yaml (and so the chart's values-<stack>.yaml).
STACK ?= dev
HELM := $(CACHE)/bin/helm
# The Spark image name the chart uses by default (helm values spark.image.repository).
SPARK_IMAGE_REPO := $(shell sed -nE 's/^    repository: *([^ #]+).*/\1/p' $(ROOT)/helm/kafka-patterns/values.yaml)
IMAGE_CONTEXT := $(ROOT)/build/image-context
# Runtime Python deps of the jobs inside the image (versions from versions.yml).
IMAGE_PY_DEPS := confluent-kafka|psycopg|psycopg-binary|pyyaml|jsonschema

.PHONY: render deploy destroy k8s-status test-iac image

render: setup ## write every object of the chart, per values file, to build/manifests/<values>/
	@HELM=$(HELM) $(PY) $(ROOT)/helm/tools/render.py --out $(ROOT)/build/manifests

deploy: setup ## Kubernetes path (kube context set): pulumi up STACK=dev|prod, wait for Ready, live checks
	@$(PLAYBOOK) $(ROOT)/ansible/playbooks/deploy-k8s.yml -e stack=$(STACK)

destroy: setup ## remove the Kubernetes path stack STACK=dev|prod (data volumes are kept)
	@$(PLAYBOOK) $(ROOT)/ansible/playbooks/destroy-k8s.yml -e stack=$(STACK)

k8s-status: setup ## Kafka, node pools, topics, users, Connect, connectors, Spark apps of STACK
	@command -v kubectl >/dev/null || { echo "kubectl not found: install kubectl (https://kubernetes.io/docs/tasks/tools/)" >&2; exit 1; }
	@kubectl config current-context >/dev/null 2>&1 || { echo "no kube context: set KUBECONFIG or run kubectl config use-context <name>" >&2; exit 1; }
	@ns=$$(sed -nE 's/^  kafka-patterns:namespace: *([^ #]+).*/\1/p' $(ROOT)/pulumi/Pulumi.$(STACK).yaml); \
	  test -n "$$ns" || { echo "no namespace in pulumi/Pulumi.$(STACK).yaml" >&2; exit 1; }; \
	  kubectl get kafka,kafkanodepool,kafkatopic,kafkauser,kafkaconnect,kafkaconnector,sparkapplication,scheduledsparkapplication,pods -n "$$ns"

test-iac: setup ## chart render + schema validation, Pulumi mocks, Ansible syntax-check/lint (no cluster)
	@HELM=$(HELM) $(PYTEST) $(ROOT)/tests/iac

image: setup ## the project Spark image (prints the docker build command when docker is unavailable)
	@rm -rf $(IMAGE_CONTEXT) && mkdir -p $(IMAGE_CONTEXT)/spark-kafka-jars
	@cp -r $(ROOT)/spark-jobs/src/kafka_patterns $(IMAGE_CONTEXT)/ && find $(IMAGE_CONTEXT) -name __pycache__ -prune -exec rm -rf {} +
	@cp $(ROOT)/spark-jobs/catalogue.yaml $(ROOT)/spark-jobs/catalogue.schema.json $(IMAGE_CONTEXT)/
	@cp $(VERSIONS) $(IMAGE_CONTEXT)/versions.yml
	@# Only the connector jars whose artifact pyspark's jars dir (= the image's) lacks.
	@pyspark_jars=$$($(PY) -c 'import pathlib, pyspark; print(pathlib.Path(pyspark.__file__).parent / "jars")'); \
	  ls $(CACHE)/spark-kafka-$(SPARK_VERSION)/*.jar >/dev/null 2>&1 || { echo "no jars in $(CACHE)/spark-kafka-$(SPARK_VERSION): run make setup" >&2; exit 1; }; \
	  for jar in $(CACHE)/spark-kafka-$(SPARK_VERSION)/*.jar; do \
	    artifact=$$(basename $$jar | sed -E 's/-[0-9][^-]*\.jar$$//'); \
	    ls $$pyspark_jars/$$artifact-[0-9]*.jar >/dev/null 2>&1 || cp $$jar $(IMAGE_CONTEXT)/spark-kafka-jars/; \
	  done; \
	  echo "==> Kafka jars for the image: $$(ls $(IMAGE_CONTEXT)/spark-kafka-jars | tr '\n' ' ')" >&2
	@sed -nE '/^python_packages:/,/^[^ #]/s/^  ($(IMAGE_PY_DEPS)): *"([^"]*)".*/\1==\2/p' $(VERSIONS) > $(IMAGE_CONTEXT)/requirements.txt
	@cmd="docker build -f $(ROOT)/spark-jobs/Dockerfile --build-arg SPARK_VERSION=$(SPARK_VERSION) -t $(SPARK_IMAGE_REPO):$(SPARK_VERSION) $(IMAGE_CONTEXT)"; \
	  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then echo "==> $$cmd" >&2; DOCKER_BUILDKIT=1 $$cmd; \
	  else echo "docker is not usable here; the build context is ready in $(IMAGE_CONTEXT). Build with:"; echo "  DOCKER_BUILDKIT=1 $$cmd"; fi

# --- bench --------------------------------------------------------------------
.PHONY: bench

bench: setup ## throughput and latency vs Kafka's own perf tools, as ratios (QUICK=1: under 3 min)
	@$(PY) -m kafka_patterns.inventory is-up || $(MAKE) up
	@cd $(ROOT) && QUICK="$(QUICK)" $(PY) -m bench
