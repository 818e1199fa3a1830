"""Each collect run records its tokens per second in the manifest; `harness run` reads it."""

from __future__ import annotations

from harness.collection.collect_stage import collect
from harness.models.throughput import stage_rates
from harness.study.manifest import read_manifest

MINI = "openai/gpt-4o-mini"


def test_each_collect_run_records_its_tokens_per_second(study, serve) -> None:
    server = serve()
    collect(study, backend="openai", model="gpt-4o-mini", base_url=server.base_url, samples=1)
    run = read_manifest(study).record()["collect"]["models"][MINI]["runs"][-1]
    assert run["completion_tokens"] > 0 and run["prompt_tokens"] > 0
    assert run["seconds"] == run["elapsed_s"] > 0
    assert run["tokens_per_s"] == round(run["completion_tokens"] / run["seconds"], 2)
    rate = stage_rates(read_manifest(study))["collect"]
    assert abs(rate - run["tokens_per_s"]) < 0.01 * rate
