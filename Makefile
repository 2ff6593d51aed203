# aqmlab: everything a developer or CI needs, from stock python3 (3.11+, with pip) and cargo.
#   make run    bootstrap, then run the main job
#   make test   bootstrap, then every check (Rust fmt/clippy/tests, ruff, pytest)
# `make help` lists the targets. Bootstrap steps are stamped in .venv/ and redone only when
# their inputs change.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export CARGO_TARGET_DIR ?= $(CURDIR)/target
export VIRTUAL_ENV := $(abspath $(VENV))
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

# Build/dev tools (runtime deps come from python/pyproject.toml through maturin develop).
# ruff is pinned: a new release may change formatting or rules and fail CI by itself.
DEV_TOOLS := "maturin>=1.8,<2" "pytest>=8,<10" "ruff==0.17.6"

RUST_SRC := $(shell find crates -name '*.rs' -o -name 'Cargo.toml') Cargo.toml Cargo.lock
PY_META  := python/pyproject.toml

STAMP_TOOLS := $(VENV)/.stamp-tools
STAMP_CORE  := $(VENV)/.stamp-core

.PHONY: help bootstrap run test lint fmt test-rust test-py lint-rust lint-py clean

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "} {printf "  make %-11s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP_TOOLS): $(BIN)/python Makefile
	$(PIP) install --upgrade pip
	$(PIP) install $(DEV_TOOLS)
	touch $@

# Builds the extension (release) and installs the package, editable, with its runtime deps.
$(STAMP_CORE): $(STAMP_TOOLS) $(RUST_SRC) $(PY_META)
	cd python && ../$(BIN)/maturin develop --release --quiet
	touch $@

bootstrap: $(STAMP_CORE) ## create .venv, install tools and deps, build the core (idempotent)

run: bootstrap ## run the main job: the quick-start scenario into results/quickstart
	$(BIN)/aqmlab run examples/quickstart.toml --out results/quickstart

test: bootstrap lint-rust test-rust lint-py test-py ## every check: Rust fmt/clippy/tests, ruff, pytest

lint-rust: ## cargo fmt --check and clippy -D warnings
	cargo fmt --all --check
	cargo clippy --all-targets --quiet -- -D warnings

test-rust: ## core unit and integration tests
	cargo test --release --quiet -p aqmlab

lint-py: $(STAMP_TOOLS) ## ruff check and ruff format --check
	$(BIN)/ruff check python
	$(BIN)/ruff format --check python

test-py: bootstrap ## pytest (through the real core)
	cd python && ../$(BIN)/python -m pytest -q

lint: lint-rust lint-py ## all linters

fmt: $(STAMP_TOOLS) ## format Rust and Python sources in place
	cargo fmt --all
	$(BIN)/ruff format python
	$(BIN)/ruff check --fix python

clean: ## remove .venv, build outputs and results
	rm -rf $(VENV) results python/src/aqmlab/_core*.so
	cargo clean
