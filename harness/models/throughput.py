"""Decoding throughput: completions, tokens, wall seconds and tokens per second of a stage's
model calls. `judge --blind` and `judge --auto`'s llm reviewers (under their reviewer ids) record
their calls in the manifest's `decoding` section, `collect`
its runs in `collect.models[KEY].runs`; `harness run` prints each stage's rate beside its time.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self, TypeVar, cast

from pydantic import JsonValue

from harness.study.manifest import Manifest, change_manifest
from harness.study.manifest_sections import Meter as MeterRecord
from harness.study.records import JsonObject

if TYPE_CHECKING:
    from harness.models.base import Completion

T = TypeVar("T")

#: The manifest section of the decoding calls of the stages that record them here.
SECTION = "decoding"
#: `harness run`'s stage names -> the manifest's
RUN_STAGES = {"judge --blind": "judge.blind", "judge --auto": "judge.auto"}


def rates(prompt_tokens: int, completion_tokens: int, seconds: float) -> JsonObject:
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

    def count(self, completion: Completion) -> None:
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

    def record(self) -> JsonObject:
        figures = rates(self.prompt_tokens, self.completion_tokens, self.seconds)
        return {"completions": self.completions, **figures}

    @classmethod
    def from_record(cls, record: Mapping[str, object], name: str = "") -> Self:
        """The figures a `record()` (or a `decoding` entry of the manifest) holds, under `name`
        (the record does not hold it); missing figures are zero."""
        section = MeterRecord.from_record(record)
        return cls(
            name,
            section.completions or 0,
            section.prompt_tokens or 0,
            section.completion_tokens or 0,
            section.seconds or 0.0,
        )


def record_decoding(study_dir: str | Path, stage: str, meter: Meter) -> None:
    """Add a call's figures to `decoding[stage][meter.name]` (summed over calls and runs)."""
    if not meter.completions:
        return

    def change(manifest: Manifest) -> None:
        if manifest.decoding is None:
            manifest.decoding = {}
        calls = manifest.decoding.setdefault(stage, {})
        old = calls.get(meter.name) or MeterRecord()
        before = Meter.from_record(old.record())
        total = Meter(
            meter.name,
            meter.completions + before.completions,
            meter.prompt_tokens + before.prompt_tokens,
            meter.completion_tokens + before.completion_tokens,
            meter.seconds + before.seconds,
        )
        record = {**total.record(), "calls": (old.calls or 0) + 1}
        calls[meter.name] = MeterRecord.from_record(record)

    change_manifest(study_dir, change)


def stage_rates(manifest: Manifest) -> dict[str, float]:
    """`harness run` stage name -> completion tokens per second of its decoding calls (collect:
    the last run of each model)."""
    out: dict[str, float] = {}
    models = (manifest.collect.models if manifest.collect is not None else None) or {}
    runs = [model.runs[-1] for model in models.values() if model.runs]
    if runs:
        _add(out, "collect", [r for r in runs if isinstance(r, dict) and "completion_tokens" in r])
    for name, stage in RUN_STAGES.items():
        meters = ((manifest.decoding or {}).get(stage) or {}).values()
        _add(out, name, [m.record() for m in meters])
    return out


def _add(out: dict[str, float], name: str, records: list[JsonObject]) -> None:
    tokens = sum(_number(r.get("completion_tokens", 0)) for r in records)
    seconds = sum(_number(r.get("seconds", r.get("elapsed_s", 0.0))) for r in records)
    if tokens and seconds:
        out[name] = tokens / seconds


def _number(value: JsonValue) -> float:
    """A figure of a record (its writers keep figures as JSON numbers)."""
    return cast(float, value)
