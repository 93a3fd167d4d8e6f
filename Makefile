# tcplab — `make demo` and `make test` set everything up from a fresh clone:
# a .venv at the repository root, the Rust extension in release mode, Python dependencies.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format test-rust test-python emu-tools browser bench schema install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Rebuild the extension whenever Rust or packaging files change.
$(STAMP): $(BIN)/python pyproject.toml Cargo.toml $(shell find crates -name '*.rs' -o -name Cargo.toml) $(shell find python -name '*.py' -o -name '*.toml')
	$(BIN)/pip install --quiet "maturin>=1.7,<2" "pytest>=8" "ruff==0.17.6"
	$(BIN)/maturin develop --release --quiet --extras test
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/tcplab demo

test: install lint test-rust test-python

# Formatting and lints (rustfmt.toml, [tool.ruff] in pyproject.toml); `make format` applies them.
PY_SOURCES = python tests benches traces crates/net/src/mmwave/direct_beam_loss.py
lint: install
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff format --check --quiet $(PY_SOURCES)
	$(BIN)/ruff check --quiet $(PY_SOURCES)

format: install
	cargo fmt --all
	$(BIN)/ruff format --quiet $(PY_SOURCES)
	$(BIN)/ruff check --quiet --fix $(PY_SOURCES)

test-rust:
	cargo test --workspace --exclude tcplab-py

test-python: install emu-tools browser
	$(BIN)/python -m pytest -q

# The report's browser test renders a report in Debian's headless Chromium (skipped without it).
browser:
	@if [ "$$(id -u)" = 0 ] && ! command -v chromium >/dev/null; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "chromium could not be installed: the browser test will be skipped"; fi

# The emulation backend's tests run as root with iproute2 (ip, tc); a fresh Debian machine may
# lack it. Without root they are skipped, so nothing is installed then.
emu-tools:
	@if [ "$$(id -u)" = 0 ] && ! command -v tc >/dev/null; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 procps >/dev/null) \
		|| echo "iproute2 could not be installed: the emulation tests will be skipped"; fi

bench: install
	cargo bench --workspace --exclude tcplab-py
	$(BIN)/python benches/speed.py
	$(BIN)/python benches/mmwave_sweep.py
	$(BIN)/python benches/sweep_speed.py

# Regenerate the checked-in JSON Schema after changing scenario types.
schema: install
	$(BIN)/tcplab schema > schema/scenario.schema.json

clean:
	rm -rf $(VENV) target
