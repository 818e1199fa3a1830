"""Decoding throughput: completions, tokens, wall seconds and tokens per second of a stage's
model calls. `judge --blind` and `judge --auto`'s llm reviewers (under their reviewer ids) record
their calls in the manifest's `decoding` section, `collect`
its runs in `collect.models[KEY].runs`; `harness run` prints each stage's rate beside its time.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from harness.study.manifest import update_manifest

T = TypeVar("T")

#: The manifest section of the decoding calls of the stages that record them here.
SECTION = "decoding"
#: `harness run`'s stage names -> the manifest's
RUN_STAGES = {"judge --blind": "judge.blind", "judge --auto": "judge.auto"}


def rates(prompt_tokens: int, completion_tokens: int, seconds: float) -> dict[str, Any]:
    """The throughput fields of a manifest record (tokens per second of wall time), the rate
    from the recorded seconds so that a reader of the record gets the same figure."""
    seconds = round(seconds, 3)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "seconds": seconds,
        "tokens_per_s": round(completion_tokens / seconds, 2) if seconds > 0 else None,
    }


@dataclass
class Meter:
    """What one decoding call produced and how long it took (wall time while it ran)."""

    name: str
    completions: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def count(self, completion: Any) -> None:
        self.completions += 1
        self.prompt_tokens += completion.prompt_tokens or 0
        self.completion_tokens += completion.completion_tokens or 0

    def timed(self, items: Iterable[T]) -> Iterator[T]:
        """`items`, with the time spent producing them added to `seconds` (not the caller's
        time between them, such as storing each result)."""
        iterator = iter(items)
        while True:
            start = time.perf_counter()
            try:
                item = next(iterator)
            except StopIteration:
                self.seconds += time.perf_counter() - start
                return
            self.seconds += time.perf_counter() - start
            yield item

    def record(self) -> dict[str, Any]:
        figures = rates(self.prompt_tokens, self.completion_tokens, self.seconds)
        return {"completions": self.completions, **figures}


def record_decoding(study_dir: str | Path, stage: str, meter: Meter) -> None:
    """Add a call's figures to `decoding[stage][meter.name]` (summed over calls and runs)."""
    if not meter.completions:
        return

    def change(data: dict[str, Any]) -> None:
        calls = data.setdefault(SECTION, {}).setdefault(stage, {})
        old = calls.get(meter.name) or {}
        total = Meter(
            meter.name,
            meter.completions + old.get("completions", 0),
            meter.prompt_tokens + old.get("prompt_tokens", 0),
            meter.completion_tokens + old.get("completion_tokens", 0),
            meter.seconds + old.get("seconds", 0.0),
        )
        calls[meter.name] = {**total.record(), "calls": old.get("calls", 0) + 1}

    update_manifest(study_dir, change)


def stage_rates(manifest: dict[str, Any]) -> dict[str, float]:
    """`harness run` stage name -> completion tokens per second of its decoding calls (collect:
    the last run of each model)."""
    out: dict[str, float] = {}
    runs = [
        model["runs"][-1]
        for model in ((manifest.get("collect") or {}).get("models") or {}).values()
        if model.get("runs")
    ]
    if runs:
        _add(out, "collect", [r for r in runs if "completion_tokens" in r])
    for name, stage in RUN_STAGES.items():
        _add(out, name, list(((manifest.get(SECTION) or {}).get(stage) or {}).values()))
    return out


def _add(out: dict[str, float], name: str, records: list[dict[str, Any]]) -> None:
    tokens = sum(r.get("completion_tokens", 0) for r in records)
    seconds = sum(r.get("seconds", r.get("elapsed_s", 0.0)) for r in records)
    if tokens and seconds:
        out[name] = tokens / seconds
