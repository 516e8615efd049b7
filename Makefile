# The two set-up commands of the README: `make demo` and `make test`. Each creates the virtual
# environment on first use (Python 3.10+ and pip are all it needs; no CUDA torch is pulled).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
BASE   := $(VENV)/.installed-base

.PHONY: demo test test-services test-mlflow test-browser test-slurm test-rehearsals test-tiers lint install clean

# Tests and lint: the base install plus the dev extra (pytest, ruff, mypy, the CPU torch).
$(STAMP): pyproject.toml
	@echo "installing mtp-eval with the dev extra (pytest, ruff, mypy, submitit, CPU torch) into $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(BASE)

# The demo: the base install only (Hydra, aiohttp, numpy, scipy, prometheus-client, matplotlib,
# datasets, lm-eval's API client; no torch, no dev tools).
$(BASE): pyproject.toml
	@echo "installing mtp-eval with its base dependencies only (Hydra, aiohttp, numpy, scipy,"
	@echo "prometheus-client, matplotlib, datasets, lm-eval[api]; no torch, no dev tools) into $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(BASE)

install: $(STAMP)

DEMO_DIR := outputs/multirun/demo-$(shell date +%Y%m%d-%H%M%S)

## demo: a 4-cell sweep (fmha_v2/fa3 x auto/fp8_e4m3) on the simulated server with bundled data,
## then the sign-off report on it (it exits 1 on purpose: the demo plants one NO-GO)
demo: $(BASE)
	$(BIN)/mtp-eval experiment=demo hydra.sweep.dir=$(DEMO_DIR)
	$(BIN)/mtp-eval-report $(DEMO_DIR); rc=$$?; \
	  echo "mtp-eval-report exit code $$rc (0 all GO, 1 a NO-GO: the demo's fmha_v2+fp8_e4m3, 2 undecided)"; \
	  echo "report: $(DEMO_DIR)/report/report.html"; [ $$rc -le 2 ]

## test: lint, type-check, then the tiers unit, integration and slow (two xdist workers each),
## then the `serial` tests alone; each tier's wall time is printed against its budget
## (tests/tiers.py; `make test-tiers` lists them)
test: $(STAMP) lint
	$(BIN)/python -m tests.tiers unit integration slow serial

## test-services: the `mlflow` and `browser` tiers in one run (they share the demo sweep)
test-services: $(STAMP)
	$(BIN)/python -m tests.tiers services

## test-mlflow: the `mlflow` tier, a real `mlflow server` and sqlite stores
test-mlflow: $(STAMP)
	$(BIN)/python -m tests.tiers mlflow

## test-browser: the `browser` tier, the report in headless Chromium (Debian's `chromium`)
test-browser: $(STAMP)
	$(BIN)/python -m tests.tiers browser

## test-slurm: the `slurm` tier against a real single-node SLURM that its session fixture brings
## up and down (.ci/slurm/cluster: root, installs Debian's slurmctld/slurmd/munge if missing)
test-slurm: $(STAMP)
	$(BIN)/python -m tests.tiers slurm

## test-rehearsals: every plan of benchmarks/live_h200/live_signoff.sh rehearsed whole on the
## simulated server (20-25 minutes on 2 cores; not in `make test`): run it before a lease
test-rehearsals: $(STAMP)
	$(BIN)/python -m tests.tiers rehearsal

test-tiers: $(STAMP)
	$(BIN)/python -m tests.tiers --list

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) outputs/runs outputs/multirun outputs/reports
