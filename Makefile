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

.PHONY: help setup up down clean status bootstrap demo test test-unit test-infra test-integration lint

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

demo: up ## bring the cluster up and run the demo with a report
	@$(PY) -m kafka_patterns.demo

# --- tests --------------------------------------------------------------------
PYTEST := $(PY) -m pytest -c $(ROOT)/tests/pytest.ini --rootdir $(ROOT)

test: setup ## every test tier; starts the cluster if needed and stops what it started
	@started=no; \
	if ! $(PY) -m kafka_patterns.inventory is-up; then $(MAKE) up; started=yes; fi; \
	rc=0; $(MAKE) test-unit test-infra test-integration || rc=$$?; \
	if [ $$started = yes ]; then echo "==> stopping the cluster this run started"; $(MAKE) down; fi; \
	exit $$rc

test-unit: setup ## unit tests and the clear-error checks (no cluster needed)
	@$(PYTEST) $(ROOT)/tests/unit

test-infra: setup ## testinfra checks of the running cluster through the Ansible inventory
	@$(PYTEST) $(ROOT)/tests/infra --hosts='ansible://all' --ansible-inventory=$(INVENTORY)

test-integration: setup ## guarantee tests against the running cluster
	@$(PYTEST) $(ROOT)/tests/integration

lint: setup ## ruff and ansible-lint
	@ruff check --config $(ROOT)/spark-jobs/pyproject.toml $(ROOT)/spark-jobs $(ROOT)/tests
	@cd $(ROOT)/ansible && ansible-lint -q playbooks roles
