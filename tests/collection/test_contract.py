"""`collect` with a backend object: it uses the capabilities the backend declares, and only
those."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from harness.collection.collect_stage import collect
from harness.errors import HarnessError
from harness.models.base import (
    BackendStats,
    ChatRequest,
    Completion,
    GenerationParams,
    ModelAPI,
)
from harness.models.budget import Budget
from harness.study.manifest import read_manifest
from tests.cli_run import run_subprocess
from tests.collection.conftest import make_study


class Counting(ModelAPI):
    """Answers every sample; keeps live counters, has a fingerprint, records what it was given.

    A study files a backend object's outputs under a provider string, so it takes a provider's
    name."""

    name, model = "openai", "counting-1"

    def __init__(self) -> None:
        self.stats = BackendStats(retries=5, status="warm")
        self.budgets: list[Budget | None] = []
        self.closed = 0

    @property
    def fingerprint(self) -> str:
        return "sha256:0123abcd"

    def complete(
        self, requests: Sequence[ChatRequest], params: GenerationParams
    ) -> Iterator[Completion]:
        self.budgets.append(self.budget)
        for request in requests:
            for sample in request.sample_numbers:
                yield Completion(
                    key=request.key,
                    sample=sample,
                    text=f"answer {sample}",
                    finish_reason="stop",
                    prompt_tokens=3,
                    completion_tokens=4,
                    model_reported=self.model,
                    system_fingerprint=None,
                    latency_s=0.0,
                    attempts=1,
                    error=None,
                    started_at="2026-01-01T00:00:00Z",
                    finished_at="2026-01-01T00:00:01Z",
                    cost_usd=self.cost(self.model, 3, 4),
                )

    def close(self) -> None:
        self.closed += 1

    def run_settings(self) -> dict[str, object]:
        return {"threads_used": 3}


def test_collect_reads_the_declared_capabilities(tmp_path):
    study = make_study(tmp_path / "s", 2)
    engine = Counting()
    result = collect(study, backend=engine, samples=2, max_cost=1.0)
    assert result.completed == 12 and result.pending == 0
    assert result.retries == 5  # the backend's own counter, not the completions' attempts
    assert result.cost_usd is None  # no prices declared: the cost is unknown, not zero
    budget = engine.budgets[0]
    assert isinstance(budget, Budget) and budget.limit == 1.0
    assert engine.budget is None  # the cap is taken back after the run
    assert engine.closed == 0  # the caller opened it, the caller closes it
    record = read_manifest(study).record()["collect"]["models"][result.model_key]
    assert record["weights"] == "sha256:0123abcd" and "base_url" not in record
    assert '"batch_api"' not in str(record["params"])
    assert record["runs"][-1]["threads_used"] == 3  # what the backend chose, with its run


def test_an_object_that_is_not_a_backend_is_refused(tmp_path):
    study = make_study(tmp_path / "s", 1)

    class Lookalike:
        name, model = "duck", "duck-1"

        def complete(self, requests: object, params: object) -> Iterator[Completion]:
            yield from ()

    with pytest.raises(HarnessError, match="neither a backend name nor a harness.models.ModelAPI"):
        collect(study, backend=Lookalike())  # type: ignore[arg-type]


def test_the_cli_refuses_an_option_of_another_backend_in_one_line(tmp_path):
    study = make_study(tmp_path / "s", 1)
    done = run_subprocess(
        "collect", "--study", str(study), "--model", "openai/m", "--model-arg", "threads=2"
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert "--threads does not apply to the openai backend" in done.stderr


def test_a_local_backend_reports_threads_only_once_loaded():
    from harness.models.local import LocalBackend

    assert LocalBackend().run_settings() == {}
