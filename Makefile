# symlab developer commands.
#   make lab    - create/update .venv and start JupyterLab on notebooks/ (Notebook 7: the same server's /tree)
#   make test   - create/update .venv, then lint, unit tests, doctests, notebook checks and browser tests
#                 (make test BROWSER=0: everything but the browser tests, and the summary says so)
#   make bench  - in .venv-bench (with the `bench` extra: PyTensor), run benchmarks/run.py $(BENCH_ARGS)
#                 (e.g. make bench BENCH_ARGS=--quick; BENCH_ARGS=--contended: only issue 36's contended run)
#   make soak   - the memory and thread checks at 5x their test sizes, with the figures
#   make fuzz   - property-based differential run of tests/fuzz/run.py: FUZZ_GRAPHS random graphs (default 500)
#                 with seed FUZZ_SEED (default: the fixed seed of tests/fuzz/campaign.py), then the figures
#                 (e.g. make fuzz FUZZ_GRAPHS=5000 FUZZ_SEED=7)

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# Touched after a successful `pip install -e '.[dev,dask]'`: the install re-runs only
# when pyproject.toml is newer than this file.
STAMP  := $(VENV)/.symlab-installed
PYTEST := $(PY) -m pytest -q -p no:cacheprovider

# Run pytest with the given arguments; exit code 5 ("no tests collected", e.g.
# an empty notebooks/ folder) counts as success, any other failure fails make.
define pytest_allow_empty
	@echo "+ pytest $(1)"
	@$(PYTEST) $(1); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "(no tests collected: ok)"; rc=0; fi; \
	exit $$rc
endef

.PHONY: help venv lab test lint unit doctest nbval browser bench graphviz-dot chromium bytecode clean fuzz soak

# BROWSER=0 skips the browser tests (JupyterLab driven in Chromium): an explicit opt-out.
BROWSER ?= 1
CHROMIUM ?= /usr/bin/chromium

help:
	@echo "make lab    - start JupyterLab on notebooks/ (creates .venv if needed; Notebook 7 at /tree)"
	@echo "make test   - ruff, pytest tests/, doctests of symlab, nbval on notebooks/, browser tests"
	@echo "              (BROWSER=0: no browser tests, reported in the summary)"
	@echo "make bench  - benchmarks against NumPy and PyTensor (BENCH_ARGS=--quick: a short smoke run)"
	@echo "make fuzz   - property-based differential testing (FUZZ_GRAPHS=5000 FUZZ_SEED=7: a longer run)"
	@echo "make soak   - the memory and thread checks at 5x their test sizes, with the figures"

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "symlab needs Python >= 3.11; run: make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[dev,dask]'
	@touch $(STAMP)

venv: $(STAMP)

# symlab is installed in editable mode, so pip byte-compiles none of it, and where
# PYTHONDONTWRITEBYTECODE is set Python never writes its .pyc files: every process would
# compile symlab's source on import (0.1-0.2 s of an `import symlab` that takes 0.07-0.1 s
# from .pyc files). compileall writes them; it skips files that are up to date.
bytecode: $(STAMP)
	@$(PY) -m compileall -q symlab

# The `dot` program of Graphviz renders the graph pictures (the Python package
# `graphviz` only calls it). Installed automatically when running as root on a
# Debian/Ubuntu system; otherwise a hint is printed and the build continues.
graphviz-dot:
	@if command -v dot >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Graphviz 'dot' not found: installing it with apt-get"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null \
			|| { echo "apt-get install graphviz failed" >&2; exit 1; }; \
		dot -V; \
	else \
		echo "WARNING: Graphviz 'dot' is not installed; graph pictures cannot be rendered."; \
		echo "  Debian/Ubuntu: sudo apt-get install graphviz   macOS: brew install graphviz"; \
		echo "  conda: conda install -c conda-forge graphviz"; \
	fi

# Debian's Chromium runs the browser tests (the PyPI playwright package drives it; `playwright install`,
# which downloads a browser, is never run). Installed with apt-get when run as root; otherwise stop
# with how to install it.
chromium:
	@if [ -x "$(CHROMIUM)" ]; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Chromium not found: installing Debian's chromium with apt-get"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
			|| { echo "apt-get install chromium failed" >&2; exit 1; }; \
	else \
		echo "ERROR: the browser tests need Chromium at $(CHROMIUM)." >&2; \
		echo "  Debian/Ubuntu: sudo apt-get install chromium   (or: make test CHROMIUM=/path/to/chromium)" >&2; \
		echo "  or skip them: make test BROWSER=0" >&2; \
		exit 1; \
	fi

# The project's Jupyter settings (jupyter/README.md: widget state saved with the notebook), installed where
# JupyterLab and Notebook 7 of the venv read their defaults.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.d/symlab.json

$(LAB_SETTINGS): jupyter/settings/overrides.d/symlab.json | $(STAMP)
	@mkdir -p $(dir $@)
	cp $< $@

# The project's server configuration (jupyter/README.md: websockets without Nagle's delay), where the venv's
# Jupyter server reads its configuration.
SERVER_CONFIG := $(VENV)/etc/jupyter/jupyter_server_config.d/symlab.json

$(SERVER_CONFIG): jupyter/jupyter_server_config.d/symlab.json | $(STAMP)
	@mkdir -p $(dir $@)
	cp $< $@

# JupyterLab; the same server serves Notebook 7 at /tree (the `notebook` package of the dev extra).
lab: $(STAMP) $(LAB_SETTINGS) $(SERVER_CONFIG) bytecode graphviz-dot
	$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/

lint: $(STAMP)
	@echo "+ ruff check symlab tests benchmarks"
	@$(VENV)/bin/ruff check --no-cache --output-format concise symlab tests benchmarks

unit: $(STAMP)
	$(call pytest_allow_empty,-n 2 tests --ignore=tests/browser)

doctest: $(STAMP)
	$(call pytest_allow_empty,--doctest-modules symlab)

# The notebook checks and the browser tests wait much of their time (for a kernel, a page, a picture), so
# they run in two workers too; --dist loadfile keeps a notebook's cells, and a browser module's tests (which
# share a notebook), in one worker, in order. Each browser worker starts its own JupyterLab and Chromium.
nbval: $(STAMP) graphviz-dot
	$(call pytest_allow_empty,-n 2 --dist loadfile --nbval notebooks/ --nbval-sanitize-with .nbval-sanitize.cfg)

browser: $(STAMP) graphviz-dot chromium
	SYMLAB_CHROMIUM=$(CHROMIUM) $(PYTEST) -n 2 --dist loadfile tests/browser

# Every stage runs even when an earlier one fails; make test fails if any did.
test: $(STAMP) bytecode graphviz-dot
	@failed=""; stages="lint unit doctest nbval"; \
	if [ "$(BROWSER)" != 0 ]; then stages="$$stages browser"; fi; \
	for stage in $$stages; do \
		$(MAKE) --no-print-directory $$stage || failed="$$failed $$stage"; \
	done; \
	if [ "$(BROWSER)" = 0 ]; then skipped="; browser tests NOT run (BROWSER=0)"; else skipped=""; fi; \
	if [ -n "$$failed" ]; then echo "make test: FAILED:$$failed$$skipped" >&2; exit 1; fi; \
	echo "make test: all stages passed ($$(echo $$stages | sed 's/ /, /g'))$$skipped"

# Arguments of benchmarks/run.py, e.g. BENCH_ARGS=--quick or BENCH_ARGS="--workloads a,d --no-pytensor".
BENCH_ARGS ?=
# The benchmarks run in their own venv with the `bench` extra (PyTensor). PyTensor pins an
# older Numba, so installing it into .venv would change what `make test` runs; in
# .venv-bench symlab and PyTensor also compile with the same Numba, which keeps the
# comparison fair.
BENCH_VENV  := .venv-bench
BENCH_PY    := $(BENCH_VENV)/bin/python
BENCH_STAMP := $(BENCH_VENV)/.symlab-bench-installed

$(BENCH_PY):
	$(PYTHON) -m venv $(BENCH_VENV)

$(BENCH_STAMP): pyproject.toml | $(BENCH_PY)
	$(BENCH_PY) -m pip install -q -e '.[dev,bench]'
	@touch $(BENCH_STAMP)

# The views' browser benchmarks (bench_browser.py) need Graphviz and Chromium; without Chromium they say so and are skipped.
bench: $(BENCH_STAMP) graphviz-dot
	@$(BENCH_PY) -m compileall -q symlab
	SYMLAB_CHROMIUM=$(CHROMIUM) $(BENCH_PY) benchmarks/run.py $(BENCH_ARGS)

# The property-based differential run (tests/fuzz/run.py); tests/whole/test_fuzz_differential.py, part of
# `make unit`, runs a bounded one. FUZZ_ARGS passes more options, e.g. FUZZ_ARGS="--numba-graphs 500".
FUZZ_GRAPHS ?= 500
FUZZ_SEED ?=
FUZZ_ARGS ?=

# The memory and thread checks of tests/whole/test_memory_and_threads.py at 5x the sizes of `make unit`
# (10,000 graphs, functions and traces, 1,000 views made and dropped), with their figures printed.
soak: $(STAMP)
	SYMLAB_SOAK_SCALE=5 $(PYTEST) -s tests/whole/test_memory_and_threads.py

fuzz: $(STAMP)
	$(PY) tests/fuzz/run.py --graphs $(FUZZ_GRAPHS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED)) $(FUZZ_ARGS)

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache
	find symlab -name __pycache__ -type d -prune -exec rm -rf {} +
