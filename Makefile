# Kafka pattern platform: the one entry point. `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

ROOT      := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VERSIONS  := $(ROOT)/catalogue/versions.yml
VENV      := $(ROOT)/.venv
PY        := $(VENV)/bin/python
CACHE     := $(ROOT)/.cache
HELM      := $(CACHE)/bin/helm
INVENTORY ?= $(ROOT)/ansible/inventories/local

# Python packages are pinned in pyproject.toml, everything else in
# versions.yml. Make parses neither: the tools of spark-jobs/tools do (pins.py writes
# the venv's requirements; image_context.py and built_images.py serve `make image`).
TOOLS     := $(ROOT)/spark-jobs/tools
PYPROJECT := $(ROOT)/pyproject.toml

export ANSIBLE_CONFIG := $(ROOT)/ansible/ansible.cfg
export PATH := $(VENV)/bin:$(PATH)
export PYTHONPATH := $(ROOT)/spark-jobs/src
# The local cluster's inventory, for the Python tools as for Ansible.
export PLATFORM_INVENTORY := $(INVENTORY)

PLAYBOOK := ansible-playbook -i $(INVENTORY)
# Quiet by default: a long command's whole output goes to .run/logs/<log>.log and the
# terminal gets one line per step (play) with its time; a failure prints the failing
# step, its message and the end of the log. V=1 shows the output live as well.
LOGS := $(ROOT)/.run/logs
# $(call quietly,<log name>,<title>,<command>[,--append])
quietly = $(PY) -m platform_cli.steps $(if $(filter 1,$(V)),--verbose) $(4) --log $(LOGS)/$(1).log --title "$(2)" -- $(3)
# make client-config USER=<name>: USER from the command line only (the shell's $USER is
# the login name, not a Kafka user).
USER_NAME := $(if $(filter command line,$(origin USER)),$(USER))

.PHONY: help setup up restart upgrade rotate-certs down clean status dashboard bootstrap client-config dlq replay-dlq bad-input demo patterns run test test-unit test-infra test-security test-integration test-faults test-kube lint

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

# --- setup ------------------------------------------------------------------
# Stamps make a second `make setup` a no-op until versions.yml or the setup roles change.
SETUP_INPUTS := $(VERSIONS) $(ROOT)/ansible/playbooks/setup.yml \
	$(shell find $(ROOT)/ansible/roles/setup/toolchain $(ROOT)/ansible/roles/setup/artifact_cache -type f 2>/dev/null)

setup: $(VENV)/.installed $(CACHE)/setup.stamp ## install everything (venv, Debian packages, Maven artifacts); quick when done

# venv.py chooses the Python the venv is made from (PYTHON3=<interpreter> picks one).
$(VENV)/.installed: $(VERSIONS) $(PYPROJECT) $(TOOLS)/pins.py $(TOOLS)/venv.py
	@python3 $(TOOLS)/venv.py $(VENV)

$(CACHE)/setup.stamp: $(VENV)/.installed $(SETUP_INPUTS)
	@$(call quietly,setup,make setup: Debian packages and Maven artifacts,$(PLAYBOOK) $(ROOT)/ansible/playbooks/setup.yml) >&2
	@mkdir -p $(CACHE) && touch $@

# --- the local cluster --------------------------------------------------------
# make up, hosts-up, hosts-down: site.yml's playbooks in stages (platform_cli.lifecycle).
# A second `make up` skips them when their inputs are unchanged and everything answers
# (platform_cli.up_to_date); FORCE=1 runs them regardless.
LIFECYCLE = $(PY) -m platform_cli.lifecycle $(if $(filter 1,$(V)),--verbose)

up: setup ## start 3 KRaft nodes, Connect, PostgreSQL, the schema registry and the monitoring (idempotent; quick when nothing changed; FORCE=1)
	@$(LIFECYCLE) up $(if $(FORCE),--force)

restart: setup ## rolling restart of the Kafka nodes, one at a time, each gated on no under-replicated partitions
	@$(call quietly,restart,make restart,$(PLAYBOOK) $(ROOT)/ansible/playbooks/restart.yml)

# make upgrade KAFKA_VERSION=4.4.0 [FINALIZE=1]: docs/operations.md, "Upgrading Kafka".
upgrade: setup ## rolling upgrade to KAFKA_VERSION=<v>, one node at a time; FINALIZE=1 raises metadata.version (no way back)
	@if [ -z "$(KAFKA_VERSION)" ]; then echo "make upgrade needs the version to move to: make upgrade KAFKA_VERSION=<v> [FINALIZE=1]" >&2; exit 2; fi
	@$(call quietly,upgrade,make upgrade to Kafka $(KAFKA_VERSION),$(PLAYBOOK) $(ROOT)/ansible/playbooks/upgrade.yml -e kafka_version=$(KAFKA_VERSION) $(if $(filter 1,$(FINALIZE)),-e kafka_upgrade_finalize=true))

rotate-certs: setup ## a new key and certificate of the project CA for every Kafka node, Connect worker and the registry; nodes roll one at a time
	@$(call quietly,rotate-certs,make rotate-certs,$(PLAYBOOK) $(ROOT)/ansible/playbooks/rotate-certs.yml -e platform_reissue_certificates=true)

down: setup ## stop everything `make up` started; data is kept
	@$(call quietly,down,make down,$(PLAYBOOK) $(ROOT)/ansible/playbooks/stop.yml)

clean: ## stop everything and remove the data (the download cache stays)
	@if [ -x $(PY) ]; then $(PY) -m platform_cli.clean; fi
	@rm -rf $(ROOT)/.run

status: setup ## nodes and roles, quorum, topics with ISR and URP, consumer lag, Connect, PostgreSQL, alerts and canary
	@$(PY) -m platform_cli.status

dashboard: setup ## the Grafana dashboards drawn from the local Prometheus: .run/dashboard/index.html (PNG charts) and screenshot.png
	@$(PY) -m kafka_patterns.monitoring.dashboard --out $(ROOT)/.run/dashboard; rc=$$?; \
	if [ $$rc -le 1 ]; then $(PY) -m platform_cli.screenshot $(ROOT)/.run/dashboard/index.html $(ROOT)/.run/dashboard/screenshot.png || rc=2; fi; \
	exit $$rc

client-config: setup ## write a client properties file for a catalogue user and print kcat flags: make client-config USER=<name>
	@test -n "$(USER_NAME)" || { echo "USER is not set: make client-config USER=<name> (a job or user of catalogue/catalogue.yaml, or admin)" >&2; exit 2; }
	@$(PY) -m platform_cli.client_config $(USER_NAME)

dlq: setup ## what is in the dead-letter topic, grouped by reason, with the jobs and source topics
	@$(PY) -m platform_cli.dlq show

bad-input: setup ## every pattern that reads readings, fed each kind of bad record: written, dead-lettered, crashed (PATTERN=<name>: one)
	@$(NEEDS) cluster --keep -- $(PY) -m platform_cli.bad_input_suite $(PATTERN)

replay-dlq: setup ## write the dead letters of one reason back to their source topics: make replay-dlq REASON='<reason>'
	@test -n "$(REASON)" || { echo "REASON is not set: make replay-dlq REASON='<reason>' (make dlq lists the reasons)" >&2; exit 2; }
	@$(PY) -m platform_cli.dlq replay --reason "$(REASON)"

bootstrap: setup ## print the bootstrap servers (use with make -s)
	@$(PY) -m kafka_patterns.config.inventory bootstrap

demo: up ## bring the cluster up, run every pattern end to end (4 at a time; PARALLEL=1: one by one), print one table
	@$(PY) -m platform_cli.demo $(if $(filter 1,$(V)),--verbose) $(if $(PARALLEL),--parallel $(PARALLEL))

patterns: setup ## list the patterns with their jobs and promised semantics
	@$(PY) -m platform_cli.run_scenarios --list

run: setup ## run one pattern end to end: make run PATTERN=<name> (see make patterns)
	@test -n "$(PATTERN)" || { echo "PATTERN is not set: make run PATTERN=<name>; make patterns lists the names" >&2; exit 2; }
	@$(NEEDS) cluster --keep -- $(PY) -m platform_cli.run_scenarios $(PATTERN)

# --- tests ------------------------------------------------------------------------
# What each tier runs and needs running lives in platform_cli.tiers: a tier starts the
# local cluster, the local Kubernetes or the test hosts when down and stops what it
# started (platform_cli.environments). make test runs every tier even when one fails.
# Pass pytest arguments with ARGS='-k cdc'; TEST_WORKERS, CHAOS_RUNS and INVENTORY reach
# the tiers from make's command line.
TIERS := $(PY) -m platform_cli.tiers
# Start an environment when it is down, for a command (--keep: leave it running).
NEEDS := $(PY) -m platform_cli.environments
tier = $(TIERS) $(1) $(if $(ARGS),-- $(ARGS))

test: setup $(HELM) ## every test tier; starts the cluster if needed and stops what it started
	@$(TIERS) all

test-unit: setup ## unit tests and the clear-error checks (no cluster needed)
	@$(call tier,unit)

test-infra: setup ## testinfra checks of the running cluster through the Ansible inventory (make up when down)
	@$(call tier,infra)

test-security: setup ## every refusal of the secure default (Kafka listeners, ACLs, Connect REST), counted
	@$(call tier,security)

test-integration: setup ## guarantee tests against the running cluster (TEST_WORKERS=1: one at a time)
	@$(call tier,integration)

test-faults: setup ## fault injection (jobs and consumers killed mid-stream, nodes stopped) against the running cluster
	@$(call tier,faults)

test-kube: setup $(HELM) ## local Kubernetes: kube-up, image, deploy STACK=local, tests/kube and the live checks
	@$(call tier,kube)

lint: setup ## ruff and ansible-lint
	@ruff check --config $(ROOT)/pyproject.toml $(ROOT)/spark-jobs $(ROOT)/tests $(ROOT)/ansible $(ROOT)/bench $(ROOT)/pulumi $(ROOT)/helm
	@cd $(ROOT)/ansible && ansible-lint -q playbooks roles

# --- Kubernetes path ---
# STACK: a Pulumi stack (pulumi/Pulumi.<stack>.yaml, and so the chart's values files),
# deployed by `pulumi up` (ansible/playbooks/deploy-k8s.yml): dev | prod on the cluster of
# the current kube context; local on the `make kube-up` cluster (always through
# .run/kube/admin.kubeconfig; state and passphrase in .run/pulumi/), with the operators'
# charts from this machine, a bring-your-own-Kafka release (values-local.yaml) and a
# Strimzi-mode one (values-local-strimzi.yaml). Unset: local when the current kube context
# is the local cluster's, or when no context is set and the local cluster exists; dev
# otherwise (helm/tools/kube_stack.py decides; `make -s kube-stack` prints it).
STACK ?=
KUBE_STACK := $(PY) $(ROOT)/helm/tools/kube_stack.py
# The stack, in a recipe's shell.
stack_sh = $(or $(STACK),$$($(KUBE_STACK) stack))

.PHONY: helm render deploy preview destroy k8s-status kube-stack test-iac image

# helm renders the chart (render, the iac and kube tiers); `make demo` does not need it.
HELM_INPUTS := $(VERSIONS) $(ROOT)/ansible/playbooks/helm.yml $(shell find $(ROOT)/ansible/roles/setup/helm_tool -type f)

helm: $(HELM) ## build the pinned helm into .cache/bin (minutes the first time; make render and the chart's tests need it)
	@:

$(HELM): $(CACHE)/setup.stamp $(HELM_INPUTS)
	@$(call quietly,helm,make helm: the pinned helm,$(PLAYBOOK) $(ROOT)/ansible/playbooks/helm.yml)
	@touch $@


render: setup $(HELM) ## write every object of the chart, per values file, to build/manifests/<values>/
	@HELM=$(HELM) $(PY) $(ROOT)/helm/tools/render.py --out $(ROOT)/build/manifests

deploy: setup ## Kubernetes path: pulumi up of STACK=local (the make kube-up cluster) or dev|prod; waits for Ready, live checks
	@stack=$(stack_sh); \
	  $(call quietly,deploy,make deploy STACK=$$stack,$(PLAYBOOK) $(ROOT)/ansible/playbooks/deploy-k8s.yml -e stack=$$stack)

preview: setup ## what make deploy STACK=local|dev|prod would change (Pulumi's preview; nothing after a deploy)
	@stack=$(stack_sh); \
	  $(call quietly,preview,make preview STACK=$$stack,$(PLAYBOOK) $(ROOT)/ansible/playbooks/preview-k8s.yml -e stack=$$stack)
	@cat $(LOGS)/pulumi-preview.txt

destroy: setup ## remove the Kubernetes path stack STACK=local|dev|prod (data volumes are kept)
	@stack=$(stack_sh); \
	  $(call quietly,destroy,make destroy STACK=$$stack,$(PLAYBOOK) $(ROOT)/ansible/playbooks/destroy-k8s.yml -e stack=$$stack)

k8s-status: setup ## operators, Spark apps (state), scheduled apps (last run), pods, volumes of STACK
	@$(KUBE_STACK) status $(STACK)

kube-stack: setup ## print the stack make deploy/destroy/k8s-status use when STACK is unset (use with make -s)
	@$(KUBE_STACK) stack

test-iac: setup $(HELM) ## chart render + schema validation, Pulumi mocks, Ansible syntax-check/lint (no cluster)
	@$(call tier,iac)

image: setup ## the Spark, spark-operator, schema registry and Strimzi (from source) images, built with podman (no Docker engine), loaded into the local cluster if it runs
	@$(call quietly,image,make image,$(PLAYBOOK) $(ROOT)/ansible/playbooks/image.yml)
	@$(PY) $(TOOLS)/built_images.py

# --- local Kubernetes ---------------------------------------------------------
# A single-node Kubernetes on this machine (etcd, API server on the project's bridge,
# controller manager, scheduler, containerd, kubelet, kube-proxy, CoreDNS), built from
# source into ${XDG_CACHE_HOME:-~/.cache}/kafka-patterns the first time; state under
# .run/kube. The playbooks print only what changes (and the progress of long steps).
KUBE_ADMIN_KUBECONFIG := $(ROOT)/.run/kube/admin.kubeconfig

.PHONY: kube-up kube-down kubeconfig

kube-up: setup ## start the local Kubernetes (first time: builds it, ~15-25 min); idempotent
	@$(call quietly,kube-up,make kube-up,$(PLAYBOOK) $(ROOT)/ansible/playbooks/kube-up.yml)

kube-down: setup ## stop the local Kubernetes, leave nothing running; its data is kept
	@$(call quietly,kube-down,make kube-down,$(PLAYBOOK) $(ROOT)/ansible/playbooks/kube-down.yml)

kubeconfig: setup ## print the local Kubernetes' admin kubeconfig path (use with make -s)
	@$(NEEDS) kubeconfig

# --- the hosts topology (network namespaces) ---------------------------------
# inventories/example-hosts for real: 3 controllers, 3 brokers, Connect and PostgreSQL,
# one per test host of this machine (a network namespace each, with its own sshd, on
# bridge kphosts0, 198.18.0.0/24), deployed over SSH by site.yml through the inventory
# role netns_hosts generates (.run/hosts/inventory). The services run as user kafka
# (PostgreSQL as postgres). Quiet: a line per play, everything in .run/logs/hosts-*.log.
.PHONY: hosts-up hosts-down test-hosts

hosts-up: setup ## the example-hosts topology on test hosts here (netns + sshd), site.yml over SSH (idempotent)
	@$(LIFECYCLE) hosts-up

hosts-down: setup ## stop the services on the test hosts and delete the hosts; nothing keeps running (data stays)
	@$(LIFECYCLE) hosts-down

test-hosts: setup ## tests/hosts against the test hosts: hosts-up when down, hosts-down after when it started them
	@$(call tier,hosts)

.PHONY: test-chaos test-hosts-chaos

test-chaos: setup ## broker faults on the hosts topology (hosts-up when down): CHAOS_RUNS per scenario, the fault table
	@$(call tier,chaos)

test-hosts-chaos: setup ## hosts-up when down, each broker fault once (not the rolling restart), tests/hosts (not the second site run), hosts-down
	@$(call tier,hosts-chaos)

# --- bench --------------------------------------------------------------------
.PHONY: bench bench-security

bench: setup ## throughput and latency vs Kafka's own perf tools, and the secure default's cost, as ratios (QUICK=1: short)
	@cd $(ROOT) && QUICK="$(QUICK)" $(NEEDS) cluster --keep -- $(PY) -m bench

bench-security: setup ## only what the secure default costs: the local cluster vs its plain-text copy (QUICK=1: short)
	@cd $(ROOT) && QUICK="$(QUICK)" $(NEEDS) cluster --keep -- $(PY) -m bench --only-security
