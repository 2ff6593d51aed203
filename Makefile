# aqmlab: everything a developer or CI needs, from stock python3 (3.11+, with pip) and cargo.
#   make run    bootstrap, then run the main job
#   make test   bootstrap, then every check (Rust fmt/clippy/tests, ruff, pytest, the wheel
#               installed in a fresh venv, the fast subset of the differential validation
#               against ns-2.35 and against Linux's own qdisc code)
#   make validate  the whole differential validation; regenerates docs/validation.md
#   make bench  performance, this tree against a reference commit; rewrites docs/performance.md's
#               generated section
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
DEV_TOOLS := "maturin>=1.8,<2" "pytest>=8,<10" "ruff==0.17.6" "hypothesis>=6.100,<7"

RUST_SRC := $(shell find crates -name '*.rs' -o -name 'Cargo.toml') Cargo.toml Cargo.lock
PY_META  := python/pyproject.toml

STAMP_TOOLS := $(VENV)/.stamp-tools
STAMP_CORE  := $(VENV)/.stamp-core
STAMP_CHROMIUM := $(VENV)/.stamp-chromium
STAMP_TSHARK := $(VENV)/.stamp-tshark
STAMP_NS2   := $(VENV)/.stamp-ns2
STAMP_LINUX_SRC := $(VENV)/.stamp-linux-source
MAIN_STUDY  := results/main
DIST        := dist

.PHONY: help bootstrap run test lint fmt test-rust test-py lint-rust lint-py clean validate \
	test-validation test-fuzz fuzz wheel test-wheel linux-bed linux-bed-noise linux-bed-aqm linux-bed-dctcp linux-bed-web bench \
	test-bench linux-qdisc-fixtures

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

# The report's browser test (python/tests/test_report_browser.py) opens the report in headless
# Chromium. Installed from the distribution when missing and we are root with apt-get; if that
# is impossible or fails, a note, no stamp (tried again next time), and that test skips.
$(STAMP_CHROMIUM): | $(BIN)/python
	@if [ -n "$$AQMLAB_CHROMIUM" ] || command -v chromium >/dev/null; then \
	  touch $@; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing chromium (apt-get) for the report's browser test"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium \
	    && touch $@ || echo "note: chromium could not be installed; the browser test will skip"; \
	else \
	  echo "note: chromium is missing and cannot be installed here (not root or no apt-get);" \
	    "the report's browser test will skip"; \
	fi

# The pcap encoder's test (crates/aqmlab/tests/it/pcap_encoder.rs) reads its capture back with
# Wireshark's tshark. Installed from the distribution when missing and we are root with apt-get
# (non-interactively: the debconf question about non-root capture is answered "no"); if that is
# impossible or fails, a note, no stamp (tried again next time), and the test checks less.
$(STAMP_TSHARK): | $(BIN)/python
	@if [ -n "$$AQMLAB_TSHARK" ] || command -v tshark >/dev/null; then \
	  touch $@; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing tshark (apt-get) for the pcap encoder's test"; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q tshark \
	    && touch $@ || echo "note: tshark could not be installed; the pcap test will not dissect"; \
	else \
	  echo "note: tshark is missing and cannot be installed here (not root or no apt-get);" \
	    "the pcap test will not dissect"; \
	fi

# The differential validation runs ns-2.35 (Debian's ns2 package): installed when missing and
# we are root with apt-get. If that is impossible, the validation says so and fails: it is a
# check, and a missing reference is not a pass.
$(STAMP_NS2): | $(BIN)/python
	@if [ -n "$$AQMLAB_NS2" ] || command -v ns >/dev/null; then \
	  touch $@; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing ns2 (apt-get) for the differential validation"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ns2 && touch $@; \
	else \
	  echo "ns-2 is missing and cannot be installed here (not root or no apt-get):" \
	    "install Debian's ns2 package or set AQMLAB_NS2 to an ns-2.35 binary"; exit 2; \
	fi

# The linux_qdisc suite builds Linux's queue disciplines in user space from Debian's
# linux-source-6.1 package (validation/linux_qdisc/kernel.py), installed when missing and we
# are root with apt-get. If that is impossible or fails, a note and no stamp (tried again next
# time): the fast subset (make test) then skips the suite with one line, and `make validate`
# stops (a missing reference is not a pass).
$(STAMP_LINUX_SRC): | $(BIN)/python
	@if [ -n "$$AQMLAB_LINUX_SOURCE" ] || [ -f /usr/src/linux-source-6.1.tar.xz ]; then \
	  touch $@; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing linux-source-6.1 (apt-get) for the linux_qdisc validation"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-source-6.1 \
	    && touch $@ || echo "note: linux-source-6.1 could not be installed; linux_qdisc will skip"; \
	else \
	  echo "note: linux-source-6.1 is missing and cannot be installed here (not root or no" \
	    "apt-get); the linux_qdisc suite will skip"; \
	fi

# The main job: the sweep (calibration, then 70 runs; a rerun resumes and skips finished
# runs), then the report, written even when some runs failed (it lists them): the exit status
# is the sweep's (1 when runs failed), or the report's own error.
run: bootstrap ## main job: 7 queue managers at 90/98 % load, Web traffic -> results/main/report.html
	$(BIN)/aqmlab sweep examples/sweeps/main.toml --out $(MAIN_STUDY); status=$$?; \
	  [ $$status -le 1 ] && $(BIN)/aqmlab report $(MAIN_STUDY) && exit $$status

test: bootstrap lint-rust test-rust lint-py test-py test-wheel test-fuzz test-validation test-bench ## every check: Rust fmt/clippy/tests, ruff, pytest, the wheel, fuzzing (slice), validation (fast), bench driver

lint-rust: ## cargo fmt --check and clippy -D warnings
	cargo fmt --all --check
	cargo clippy --all-targets --quiet -- -D warnings

test-rust: | $(STAMP_TSHARK) ## core unit and integration tests (the pcap test with tshark)
	cargo test --release --quiet -p aqmlab

lint-py: $(STAMP_TOOLS) ## ruff check and ruff format --check
	$(BIN)/ruff check python validation fuzz bench
	$(BIN)/ruff format --check python validation fuzz bench

test-py: bootstrap $(STAMP_CHROMIUM) | $(STAMP_TSHARK) ## pytest (through the real core; the report's in Chromium)
	cd python && ../$(BIN)/python -m pytest -q

test-validation: bootstrap $(STAMP_NS2) $(STAMP_LINUX_SRC) ## the fast subset of the validation (ns-2.35, Linux qdiscs)
	$(BIN)/python -m pytest -q -p no:cacheprovider validation/tests
	$(BIN)/python -m validation --out out/validation
	$(BIN)/python -m validation.l4s --scale smoke --out out/validation/l4s-smoke

test-fuzz: bootstrap ## the fuzzer's bounded slice (Hypothesis-driven generated scenarios)
	$(BIN)/python -m pytest -q -p no:cacheprovider fuzz/tests

fuzz: bootstrap ## a long fuzzing campaign (10,000 scenarios) -> docs/reliability.md
	$(BIN)/python -m fuzz --count 10000 --write-docs

validate: bootstrap $(STAMP_NS2) $(STAMP_LINUX_SRC) ## the whole validation (ns-2.35, Linux qdiscs) -> docs/validation.md
	$(BIN)/python -m validation --all --out out/validation --write-docs
	$(BIN)/python -m validation.l4s --scale full --out out/validation/l4s-full --write-docs

# The kernel's DualPI2 logs committed for the linux_qdisc suite (validation/linux_qdisc/
# fixture.py): sch_dualpi2.c is in Linux 6.17 and later only, which no package here carries;
# AQMLAB_DUALPI2_SOURCE names a kernel tree (AQMLAB_DUALPI2_UPSTREAM: what it is, for the record).
linux-qdisc-fixtures: bootstrap ## regenerate validation/linux_qdisc/fixtures (needs AQMLAB_DUALPI2_SOURCE)
	$(BIN)/python -m validation.linux_qdisc.fixture

# Issue 34's performance table, this tree against the reference commit (bench/cases.py), whole
# processes alternated, 5 runs each: about an hour on 2 cores (the 1 Gb/s Web case's 300-s
# form is ≈45 minutes of it), plus the reference's builds the first time (kept in .bench/).
# Only a full run rewrites the page. A short look (printed only):
#   make bench BENCH_ARGS="--quick --cases greedy-reno"
bench: bootstrap ## performance: this tree against the reference commit -> docs/performance.md
	$(BIN)/python -m bench $(BENCH_ARGS)

# The driver's own tests: parsing, statistics, the page's markers, and one quick case run with
# this tree's benchmark binary as both sides (the reference is never built here).
test-bench: bootstrap ## make bench's driver: its parsing, statistics, markers, a quick run
	$(BIN)/python -m pytest -q -p no:cacheprovider bench/tests

# Real Linux TCP in network namespaces against the same scenarios in aqmlab (root needed; it
# says so and exits 0 otherwise): validation/linux/README.md.
# The whole matrix (about 45 minutes): reno, cubic, bbr; 1/4/16/64 flows at 40 ms and 4/16/64
# over 20-80 ms; then one comparison of everything recorded (summary.md, comparison.md).
linux-bed: bootstrap ## Linux testbed (root): reno/cubic/bbr, 1-64 flows, 40 ms and 20-80 ms, against aqmlab
	@if [ "$$(id -u)" != 0 ]; then $(BIN)/python -m validation.linux; exit 0; fi; \
	out=validation/linux/results/$$(date +%Y%m%d-%H%M%S); \
	$(BIN)/python -m validation.linux --flows 1,4,16,64 --cc reno,cubic,bbr --rtt 40 --seconds 60 --out $$out; \
	$(BIN)/python -m validation.linux --flows 4,16,64 --cc reno,cubic,bbr --rtt 20-80 --seconds 60 --out $$out; \
	$(BIN)/python -m validation.linux --from $$out

linux-bed-noise: bootstrap ## the Linux testbed's own noise: 3 runs each of reno and bbr, 4 flows
	$(BIN)/python -m validation.linux --flows 4 --cc reno,bbr --rtt 40 --seconds 60 --repeat 3

# The AQM qdiscs the host kernel lacks, in user-mode Linux (validation/linux/README.md, "Other
# qdiscs"): one boot per configuration (about 90 s each, 20 of them), the netem delay line, then
# one comparison of everything recorded. The guest is timing-sensitive: run it on a quiet host.
linux-bed-aqm: bootstrap ## Linux testbed in user-mode Linux (root): pfifo/codel/fq_codel/pie/cake, reno/cubic, 4 and 16 flows
	@if [ "$$(id -u)" != 0 ]; then $(BIN)/python -m validation.linux; exit 0; fi; \
	out=validation/linux/results/uml-aqm-$$(date +%Y%m%d-%H%M%S); \
	for cc in reno cubic; do for n in 4 16; do for q in pfifo codel fq_codel pie cake; do \
	  $(BIN)/python -m validation.linux --kernel uml --delay-line netem --qdisc $$q --cc $$cc \
	    --flows $$n --rtt 40 --seconds 60 --out $$out; \
	done; done; done; \
	$(BIN)/python -m validation.linux --from $$out

# DCTCP through the marking queues, and short (Web-like) flows beside two greedy ones, in
# user-mode Linux (validation/linux/README.md, "DCTCP and marking queues", "Short flows"):
# one boot per matrix (about 80 s a configuration), then the bed's noise (3 runs of one).
linux-bed-dctcp: bootstrap ## Linux testbed in user-mode Linux (root): dctcp through fq_codel ce_threshold and step-marking red, 4 and 16 flows
	@if [ "$$(id -u)" != 0 ]; then $(BIN)/python -m validation.linux; exit 0; fi; \
	$(BIN)/python -m validation.linux --kernel uml --delay-line netem --qdisc fq_codel_ce,red_step \
	  --cc dctcp --flows 4,16 --rtt 40 --seconds 60 --out validation/linux/results/uml-dctcp-$$(date +%Y%m%d-%H%M%S)

linux-bed-web: bootstrap ## Linux testbed in user-mode Linux (root): short flows at 50 % load + 2 greedy, cubic, five qdiscs, and the noise
	@if [ "$$(id -u)" != 0 ]; then $(BIN)/python -m validation.linux; exit 0; fi; \
	out=validation/linux/results/uml-web-$$(date +%Y%m%d-%H%M%S); \
	$(BIN)/python -m validation.linux --kernel uml --delay-line netem --qdisc pfifo,codel,fq_codel,pie,cake \
	  --cc cubic --flows 2 --web 0.5 --rtt 40 --seconds 60 --out $$out; \
	$(BIN)/python -m validation.linux --kernel uml --delay-line netem --qdisc fq_codel \
	  --cc cubic --flows 2 --web 0.5 --rtt 40 --seconds 60 --repeat 3 --out $$out-noise

# The installable wheel: abi3 (one wheel for every CPython >= 3.11 on this platform), release
# profile, into dist/ (the previous one removed). Installing it needs no Rust toolchain.
wheel: $(STAMP_TOOLS) ## build the installable wheel (abi3, release) into dist/
	rm -f $(DIST)/aqmlab-*.whl
	cd python && ../$(BIN)/maturin build --release --quiet --out ../$(DIST)

# Installs that wheel in a fresh virtual environment (its dependencies from the package
# index) and runs a scenario, the Python API and a tiny reproduction with it, from outside
# the checkout (python/tests/test_wheel.py). About a minute: after bootstrap the wheel's
# build reuses the release build of the extension (seconds); pip's cache makes reruns fast.
test-wheel: wheel ## install dist/'s wheel in a fresh venv and run aqmlab from it
	cd python && AQMLAB_WHEEL="$$(ls ../$(DIST)/aqmlab-*.whl)" \
	  ../$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_wheel.py

lint: lint-rust lint-py ## all linters

fmt: $(STAMP_TOOLS) ## format Rust and Python sources in place
	cargo fmt --all
	$(BIN)/ruff format python validation fuzz bench
	$(BIN)/ruff check --fix python validation fuzz bench

clean: ## remove .venv, build outputs and results
	rm -rf $(VENV) results $(DIST) python/src/aqmlab/_core*.so .bench
	cargo clean
