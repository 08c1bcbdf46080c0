# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
# The torch to install when the venv has none. A GPU runner that already has its nightly
# can use `make VENV_ARGS=--system-site-packages` so that torch is never reinstalled.
TORCH_SPEC ?= torch==2.13.0
VENV_ARGS ?=
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: run test test-fast lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV_ARGS) $(VENV)

$(INSTALLED): $(PY) pyproject.toml
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

run: $(INSTALLED)
	$(VENV)/bin/triagebot run

# Every test: the fast tier and the slow one (whole sweeps, every model of the installed transformers).
test: $(INSTALLED)
	$(VENV)/bin/ruff check triagebot tests bench
	$(PY) -m pytest -q

# The fast tier alone, while editing: the tests not marked `slow`.
test-fast: $(INSTALLED)
	$(VENV)/bin/ruff check triagebot tests bench
	$(PY) -m pytest -q -m "not slow"

lint: $(INSTALLED)
	$(VENV)/bin/ruff check triagebot tests bench
	$(VENV)/bin/ruff format --check triagebot tests bench

bench: $(INSTALLED)
	$(PY) bench/sweep_overhead.py

clean:
	rm -rf $(VENV) .triagebot .pytest_cache
