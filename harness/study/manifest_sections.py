"""The sections of `manifest.json`, one typed model each, and the `Manifest` that holds them.

Each model reads a section's record (`from_record`) and gives it back unchanged (`record`):
fields a study never wrote stay absent, integers stay integers, and keys this harness does not
know are kept as they were. The manifest is the study's history, and history is never dropped
without a word: a newer harness's keys must survive an update by this one. A value of the wrong
type is refused instead, in one line naming the file and the field (`ManifestError`).

Models are strict (no `"3"` for 3, no `true` for 1) so that what is read is what is written.
Fields are declared in sorted order, as the file is written (`sort_keys`), so a record read from
the file comes back in the same key order (`Collect` adds its two after the fields it inherits).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError
from pydantic_core import ErrorDetails

from harness.errors import HarnessError
from harness.study.records import JsonObject

__all__ = [
    "Adjudication",
    "Analysis",
    "AutoFailure",
    "BlindedStep",
    "Blinding",
    "CalibrationRecord",
    "Collect",
    "CollectedModel",
    "Command",
    "Controls",
    "Cutoff",
    "Escalation",
    "EscalationRound",
    "GeometryRecord",
    "Generate",
    "HistoryLost",
    "LeakAudit",
    "LockRecord",
    "Manifest",
    "ManifestError",
    "MaterialFile",
    "Meter",
    "Number",
    "Omit",
    "Prereg",
    "Routing",
    "Section",
    "UnsureLimit",
]

#: A JSON number as written: pydantic would turn an int read into a `float` field into 1.0, and
#: the file would change on its next write.
Number = int | float
#: A sampling setting the study asked the server to leave at its own default (`--temperature omit`).
Omit = Literal["omit"]


class ManifestError(HarnessError):
    """A manifest field holds a value of the wrong type."""


class Section(BaseModel):
    """A manifest section: typed known fields, unknown ones kept (see the module's note); its
    `record`/`from_record` pair is the style of `harness.study.records`."""

    model_config = ConfigDict(extra="allow", strict=True, protected_namespaces=())
    __pydantic_extra__: dict[str, JsonValue] = Field(init=False)

    @classmethod
    def from_record(
        cls, record: Mapping[str, object], file: str | Path | None = None, *, writing: bool = False
    ) -> Self:
        """The section read from its record; a wrong value names `file` and the field.
        `writing`: the record is what a command is about to write, so the wrong value is the
        command's, and the file is left as it was."""
        try:
            return cls.model_validate(record)
        except ValidationError as error:
            raise _manifest_error(error, file, writing) from None

    def record(self) -> JsonObject:
        """The record to write: exactly the keys read or set, unknown ones included. A field
        set to a value of the wrong type is dumped as it is (no pydantic warning): the write
        checks the record again and refuses it in one line."""
        return self.model_dump(exclude_unset=True, warnings=False)


def _manifest_error(
    error: ValidationError, file: str | Path | None, writing: bool
) -> ManifestError:
    problems = error.errors()
    field = _field_path(problems[0])
    # a union (`int | float`) reports once per member, all at the same field
    said = [p["msg"] for p in problems if _field_path(p) == field]
    reason = " or ".join(dict.fromkeys(said)).replace(" or Input should be", " or")
    found = "" if problems[0]["type"] == "missing" else f" (found {_short(problems[0]['input'])})"
    advice = (
        "refused before writing: this command made the value, the file is unchanged"
        if writing
        else "correct that field or restore the manifest from a backup"
    )
    return ManifestError(f"{reason}{found}; {advice}", file=file, column=field)


def _short(value: object, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _field_path(problem: ErrorDetails) -> str:
    """The field's dotted path: pydantic's location without the union members it tried."""
    loc = problem["loc"]
    if problem["type"] != "missing":
        loc = tuple(p for p in loc if not (_UNION_TAG.fullmatch(str(p)) or p in __all__))
    return ".".join(str(part) for part in loc) or "(top level)"


#: Names pydantic gives the members of a union in an error's location (`int`, `list[...]`; a
#: section model goes by its class name), which are no field of the file.
_UNION_TAG = re.compile(r"int|float|str|bool|none|(list|dict|literal)\[.*\]")


class MaterialFile(Section):
    path: str
    sha256: str


class LockRecord(Section):
    differs: dict[str, str | None] | None = None
    file: str | None = None
    packages: int | None = None
    sha256: str | None = None


class Command(Section):
    """One stage run: its command line, parameters, time and environment."""

    argv: list[str] | None = None
    at: str | None = None
    harness_version: str | None = None
    lock: LockRecord | None = None
    packages: dict[str, str | None] | None = None
    params: JsonObject | None = None
    platform: str | None = None
    python: str | None = None
    stage: str | None = None


class Generate(Section):
    families: list[JsonValue] | None = None
    match_audit: JsonValue = None
    n_topics: int | None = None
    pilot: bool | None = None
    seed: int | None = None
    topic_selection: JsonValue = None


class CollectedModel(Section):
    """One model's (or configuration's) collection record, under `collect.models[key]`."""

    backend: str | None = None
    batch_ids: list[JsonValue] | None = None
    batch_size: int | None = None
    cost_usd: Number | None = None
    label: str | None = None
    max_tokens: int | None = None
    model: str | None = None
    model_key: str | None = None
    outputs: JsonValue = None
    params: JsonValue = None
    provider_string: str | None = None
    reported: list[JsonValue] | None = None
    runs: list[JsonValue] | None = None
    samples: int | None = None
    seed: int | Omit | None = None
    temperature: Number | Omit | None = None
    tokens: JsonValue = None
    top_p: Number | Omit | None = None
    weights: str | None = None


class Collect(CollectedModel):
    """`collect`: `models` and `removed`; an older study wrote one model's record here directly
    (its fields are those of `CollectedModel`)."""

    models: dict[str, CollectedModel] | None = None
    removed: list[JsonValue] | None = None


class Blinding(Section):
    made_at: str | None = None
    n_items: int | None = None
    sha256: str | None = None


class Cutoff(Section):
    by: str | None = None
    date: str | None = None
    stored_at: str | None = None


class Prereg(Section):
    at: str | None = None
    plan_path: str | None = None
    plan_sha256: str | None = None


class Routing(Section):
    balance: list[JsonObject] | None = None
    distinct_topics: bool | None = None
    k: int | None = None
    n_assignments: int | None = None
    n_items: int | None = None
    parts: dict[str, int] | None = None
    pending_outputs: JsonObject | None = None
    review_what_exists: bool | None = None
    seed: int | None = None
    solver: str | None = None


class Adjudication(Section):
    escalate: bool | None = None
    method: str | None = None
    per_item: int | None = None
    population: int | None = None
    seed: int | None = None
    size: int | None = None
    strata: dict[str, int] | None = None
    stratify: str | None = None
    topics: Number | None = None
    unsure: str | None = None


class BlindedStep(Section):
    """One blinded text step (`extract`, `normalise`) under `blinded_steps`."""

    fidelity: dict[str, int] | None = None
    items: int | None = None
    outcomes: dict[str, int] | None = None
    runs: list[JsonValue] | None = None


class CalibrationRecord(Section):
    """One automated reviewer's decision rule under `calibration[reviewer]`."""

    decided_at: str | None = None
    default_threshold: Number | None = None
    method: str | None = None
    n_not_published: int | None = None
    n_published: int | None = None
    note: str | None = None
    rule: str | None = None
    sensitivity: Number | None = None
    settings: JsonObject | None = None
    specificity: Number | None = None
    status: str | None = None
    threshold: Number | None = None
    unsure: str | None = None
    youden: Number | None = None
    youden_default: Number | None = None


class Controls(Section):
    adjudicator_share: Number | None = None
    calibration_share: Number | None = None
    counts: dict[str, dict[str, int]] | None = None
    fidelity: JsonValue = None
    made: JsonValue = None
    min_per_reviewer: int | None = None
    n_items: int | None = None
    notes: list[str] | None = None
    per_reviewer: dict[str, int] | None = None
    plan_path: str | None = None
    plan_sha256: str | None = None
    planned_per_reviewer: dict[str, int] | None = None
    preregistered: bool | None = None
    share: Number | None = None
    warning: str | None = None


class Meter(Section):
    """Decoding calls of one kind within a stage, under `decoding[stage][name]`."""

    calls: int | None = None
    completion_tokens: int | None = None
    completions: int | None = None
    prompt_tokens: int | None = None
    seconds: Number | None = None
    tokens_per_s: Number | None = None


class GeometryRecord(Section):
    attn_implementation: str | None = None
    chat_template: bool | None = None
    heads: int | None = None
    layers: int | None = None
    position: str | None = None


class LeakAudit(Section):
    at: str | None = None
    auc: Number | None = None
    ci_high: Number | None = None
    ci_low: Number | None = None
    controls: JsonValue = None
    folds: int | None = None
    method: str | None = None
    models: JsonValue = None
    n_cross: int | None = None
    n_items: int | None = None
    n_topics: int | None = None
    note: str | None = None
    packet_warnings: int | None = None


class Analysis(Section):
    at: str | None = None
    deviations: list[JsonValue] | None = None
    partial: JsonValue = None
    plan_sha256: str | None = None
    report: dict[str, str] | None = None
    reviews_after_unblinding: int | None = None
    verdict: str | None = None


class EscalationRound(Section):
    assignments: int | None = None
    at: str | None = None
    exhausted: int | None = None
    items: int | None = None
    round: int | None = None
    settled: int | None = None
    waiting: int | None = None


class Escalation(Section):
    rounds: list[EscalationRound] | None = None


class UnsureLimit(Section):
    accepted: dict[str, JsonObject] | None = None
    discarded: list[JsonObject] | None = None


class AutoFailure(Section):
    """An automated reviewer whose last `judge --auto` or `--calibrate` run failed."""

    at: str | None = None
    fix: str | None = None
    message: str | None = None
    method: str | None = None
    stage: str | None = None


class HistoryLost(Section):
    at: str | None = None
    reason: str | None = None


class Manifest(Section):
    """The whole manifest: one field per section (see `docs/architecture.md` for who writes
    which); sections written by a newer harness are kept as they were."""

    adjudication: Adjudication | None = None
    analysis: Analysis | None = None
    auto_failures: dict[str, AutoFailure] | None = None
    blinded_steps: dict[str, BlindedStep] | None = None
    blinding: Blinding | None = None
    calibration: dict[str, CalibrationRecord] | None = None
    collect: Collect | None = None
    commands: list[Command] | None = None
    controls: Controls | None = None
    created_at: str | None = None
    cutoff: Cutoff | None = None
    decoding: dict[str, dict[str, Meter]] | None = None
    escalation: Escalation | None = None
    generate: Generate | None = None
    geometry: dict[str, GeometryRecord] | None = None
    history_lost: HistoryLost | None = None
    leak_audit: LeakAudit | None = None
    materials: dict[str, dict[str, MaterialFile]] | None = None
    prereg: Prereg | None = None
    routing: Routing | None = None
    study_file: JsonObject | None = None
    unsure_limit: UnsureLimit | None = None
    updated_at: str | None = None
