# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
# The torch to install, with the torchvision built for it (the timm suite needs one), when the
# venv has no pair that imports together. PyPI has torchvision only for its own builds of torch
# (CUDA builds, which run on a CPU too); `!=2.13.0+cpu` keeps a local CPU wheel of the release,
# which would win pip's choice (a local label sorts higher), from taking its place. A GPU runner
# that already has its nightly and torchvision can use `make VENV_ARGS=--system-site-packages`
# so that neither is ever reinstalled.
TORCH_SPEC ?= torch==2.13.0,!=2.13.0+cpu
TORCHVISION_SPEC ?= torchvision==0.28.0
VENV_ARGS ?=
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
# Every dependency but torch, pinned with hashes (`make lock` writes them from pyproject.toml):
# the runtime alone for the workflows' jobs that hold a token (action.yml), the dev extra too here.
RUNTIME_LOCK := requirements/runtime.lock
DEV_LOCK := requirements/dev.lock
# `make lock UPGRADE=transformers` moves one pinned package to its newest release (see the
# docs/configuration.md, "Moving transformers"); without it every pin already in the locks stays.
UPGRADE ?=
LOCK_OPTIONS = --quiet --generate-hashes --universal --python-version 3.11 \
	--excludes requirements/excluded.txt --custom-compile-command "make lock" \
	$(if $(UPGRADE),--upgrade-package $(UPGRADE))

.PHONY: run test test-fast test-torch-free lint lock docs bench bench-full bench-night clean

$(PY):
	$(PYTHON) -m venv $(VENV_ARGS) $(VENV)

$(INSTALLED): $(PY) pyproject.toml $(DEV_LOCK)
	$(PY) -c "import torch, torchvision" 2>/dev/null || { \
		$(PY) -m pip install --quiet "$(TORCH_SPEC)" "$(TORCHVISION_SPEC)" && $(PY) -c "import torchvision"; }
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(DEV_LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

# The quick start: the smoke corpus (32 models, about 14 minutes on 2 cores), not the whole corpus a
# night sweeps, and never published (no token): `triagebot run` alone sweeps [sweep] corpus.
run: $(INSTALLED)
	$(VENV)/bin/triagebot run --corpus smoke

lock: $(INSTALLED)
	$(PY) -m uv pip compile pyproject.toml $(LOCK_OPTIONS) -o $(RUNTIME_LOCK)
	$(PY) -m uv pip compile pyproject.toml --extra dev --constraints $(RUNTIME_LOCK) $(LOCK_OPTIONS) -o $(DEV_LOCK)

# Every test: the fast tier and the slow one (whole sweeps, every model of the installed transformers).
test: $(INSTALLED)
	$(VENV)/bin/ruff check triagebot tests bench
	$(PY) -m pytest -q

# The fast tier alone, while editing: the tests not marked `slow`.
test-fast: $(INSTALLED)
	$(VENV)/bin/ruff check triagebot tests bench
	$(PY) -m pytest -q -m "not slow"

# The tests not marked `torch`, in an interpreter that cannot import torch, transformers, diffusers,
# timm or scipy (tests/torchless): they must pass there, as on a runner without model code.
test-torch-free: $(INSTALLED)
	PYTHONPATH=$(CURDIR)/tests/torchless $(PY) -m pytest -q -m "not torch"

lint: $(INSTALLED)
	$(VENV)/bin/ruff check triagebot tests bench
	$(VENV)/bin/ruff format --check triagebot tests bench

# The documents rendered from a real night (docs/generate.py): docs/example-issue.md, from the
# committed smoke sweep in tests/data. tests/test_example_issue.py fails when one is stale.
docs: $(INSTALLED)
	$(PY) docs/generate.py

bench: $(INSTALLED)
	$(PY) bench/sweep_overhead.py --ladder

# The whole transformers corpus (or `make bench-full SHARE=0.1`, a stratified share scaled up)
# swept twice with both default flags, every flag run made (`always`), then only where the
# baseline graph-breaks (`graph_breaks`, longest models first by the first sweep's costs), and
# the check that both find the same crashes and helped models. Run it on a quiet machine.
SHARE ?= 1
BENCH_FULL ?= .triagebot/bench-full
bench-full: $(INSTALLED)
	$(PY) bench/full_sweep.py run --share $(SHARE) --when always --out $(BENCH_FULL)/always
	$(PY) bench/full_sweep.py run --share $(SHARE) --when graph_breaks \
		--costs $(BENCH_FULL)/always/snapshot.json --out $(BENCH_FULL)/graph_breaks
	$(PY) bench/full_sweep.py compare $(BENCH_FULL)/always/snapshot.json $(BENCH_FULL)/graph_breaks/snapshot.json

# Two nights one after the other in one invocation (`bench/night.py`): every phase's wall time,
# CPU time and run seconds, and their ratios. COMPARE=counting (the default night against the
# counting-only one), backward (against the defaults without the backward rung), suites (the
# three suites side by side against transformers alone), or several comma-separated, which share
# their nights. The whole corpus by default (an hour or more on 2 cores: run it on a quiet
# machine), or `make bench-night SHARE=0.12`, a stratified share with its ladder's bounds scaled.
COMPARE ?= counting
bench-night: $(INSTALLED)
	$(PY) bench/night.py --compare $(COMPARE) --share $(SHARE) --out .triagebot/bench-night/$(COMPARE)

clean:
	rm -rf $(VENV) .triagebot .pytest_cache
