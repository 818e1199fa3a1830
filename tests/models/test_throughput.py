"""Decoding throughput in the manifest, and the rates `harness run` prints beside stage times."""

from __future__ import annotations

import json

from harness.models.base import Completion
from harness.models.throughput import Meter, rates, record_decoding, stage_rates
from harness.study.manifest import read_manifest
from harness.study.manifest_sections import Manifest


def completion(tokens: int) -> Completion:
    return Completion(
        key="k",
        sample=0,
        text="x",
        finish_reason="stop",
        prompt_tokens=100,
        completion_tokens=tokens,
        model_reported=None,
        system_fingerprint=None,
        latency_s=0.0,
        attempts=1,
        error=None,
        started_at="",
        finished_at="",
        cost_usd=0.0,
    )


def test_calls_are_summed_per_stage_and_name(tmp_path) -> None:
    (tmp_path / "manifest.json").write_text("{}")
    for tokens, seconds in ((30, 2.0), (10, 2.0)):
        meter = Meter("extract+normalise", seconds=seconds)
        meter.count(completion(tokens))
        record_decoding(tmp_path, "judge.blind", meter)
    record_decoding(tmp_path, "judge.blind", Meter("control texts"))  # nothing decoded
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["decoding"]["judge.blind"] == {
        "extract+normalise": {
            "completions": 2,
            "prompt_tokens": 200,
            "completion_tokens": 40,
            "seconds": 4.0,
            "tokens_per_s": 10.0,
            "calls": 2,
        }
    }
    assert stage_rates(read_manifest(tmp_path)) == {"judge --blind": 10.0}


def test_meter_times_only_the_producing() -> None:
    import time

    meter = Meter("m")
    for _ in meter.timed(iter([1, 2])):
        time.sleep(0.05)  # the caller's work between items is not decoding
    assert meter.seconds < 0.04


def test_collect_rate_is_read_from_each_models_last_run() -> None:
    runs = {
        "a": {"runs": [{"elapsed_s": 9.0}, {**rates(50, 100, 10.0), "elapsed_s": 10.0}]},
        "b": {"runs": [{**rates(50, 60, 2.0), "elapsed_s": 2.0}]},
    }
    manifest = Manifest.from_record({"collect": {"models": runs}})
    assert stage_rates(manifest) == {"collect": 160 / 12}
    assert rates(1, 0, 0.0)["tokens_per_s"] is None
