"""The `outputs` table: one completion per prompt, model and sample (failed ones included)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, fields
from operator import attrgetter

from harness.study.store import Study


@dataclass(frozen=True)
class OutputRecord:
    output_id: str
    prompt_id: str
    sample: int
    status: str  # ok | failed
    backend: str
    model: str
    model_key: str
    model_reported: str | None
    system_fingerprint: str | None
    params: str  # JSON
    text: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    latency_s: float | None
    attempts: int
    error: str | None
    started_at: str
    finished_at: str


@dataclass(frozen=True)
class ReportedModel:
    """Ok outputs of one model grouped by what the server said it was."""

    model_reported: str | None
    system_fingerprint: str | None
    outputs: int
    cost_usd: float | None
    prompt_tokens: int | None
    completion_tokens: int | None


@dataclass(frozen=True)
class ModelOutputs:
    ok: int
    failed: int
    samples: int  # distinct sample numbers stored


_COLUMNS = tuple(f.name for f in fields(OutputRecord))
_KEPT = ("output_id", "prompt_id", "sample", "model_key")
# An ok row is never replaced; a failed one is, and its attempts add up.
_STORE = (
    f"INSERT INTO outputs ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) "
    "ON CONFLICT DO UPDATE SET "
    + ", ".join(
        "attempts=outputs.attempts + excluded.attempts" if c == "attempts" else f"{c}=excluded.{c}"
        for c in _COLUMNS
        if c not in _KEPT
    )
    + " WHERE outputs.status = 'failed'"
)


def store_outputs(conn: sqlite3.Connection, outputs: Iterable[OutputRecord]) -> None:
    """Add or retry completions inside the caller's transaction."""
    values = attrgetter(*_COLUMNS)
    conn.executemany(_STORE, (values(o) for o in outputs))


def output_states(study: Study, model_key: str) -> dict[tuple[str, int], str]:
    """(prompt id, sample) -> status of every stored output of one model."""
    rows = study.rows(
        "SELECT prompt_id, sample, status FROM outputs WHERE model_key = ?", (model_key,)
    )
    return {(r["prompt_id"], r["sample"]): r["status"] for r in rows}


def output_count(study: Study, model_key: str | None = None) -> int:
    """Stored outputs (ok or failed), of one model when given."""
    if model_key is None:
        return study.count("outputs")
    return study.count("outputs", "model_key = ?", (model_key,))


def status_counts(study: Study, model_key: str) -> dict[str, int]:
    """Outputs of one model per status."""
    rows = study.rows(
        "SELECT status, COUNT(*) AS n FROM outputs WHERE model_key = ? GROUP BY status",
        (model_key,),
    )
    return {r["status"]: r["n"] for r in rows}


def reported_models(study: Study, model_key: str) -> list[ReportedModel]:
    """What the server reported for the ok outputs of one model, with their tokens and cost."""
    rows = study.rows(
        "SELECT model_reported, system_fingerprint, COUNT(*), SUM(cost_usd), "
        "SUM(prompt_tokens), SUM(completion_tokens) FROM outputs "
        "WHERE status = 'ok' AND model_key = ? GROUP BY model_reported, system_fingerprint",
        (model_key,),
    )
    return [ReportedModel(*row) for row in rows]


def outputs_by_model(study: Study) -> dict[str, ModelOutputs]:
    """Ok and failed outputs and distinct samples per model key."""
    rows = study.rows(
        "SELECT model_key, SUM(status = 'ok'), SUM(status = 'failed'), COUNT(DISTINCT sample) "
        "FROM outputs GROUP BY model_key"
    )
    return {r[0]: ModelOutputs(r[1], r[2], r[3]) for r in rows}


def repeated_texts(study: Study) -> dict[str, int]:
    """Per model key, ok samples whose text repeats an earlier sample of the same prompt (a
    server that ignored the seed or n); models without any are left out."""
    rows = study.rows(
        "SELECT model_key, SUM(n - 1) FROM (SELECT model_key, COUNT(*) AS n FROM outputs "
        "WHERE status = 'ok' GROUP BY model_key, prompt_id, text HAVING n > 1) "
        "GROUP BY model_key"
    )
    return {r[0]: r[1] for r in rows}


def output_models(study: Study) -> list[str]:
    """The distinct model names (as requested) of the stored outputs."""
    return [r[0] for r in study.rows("SELECT DISTINCT model FROM outputs ORDER BY model")]


def most_samples(study: Study) -> int | None:
    """The largest number of ok outputs of one prompt and model (None without outputs)."""
    rows = study.rows(
        "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM outputs "
        "WHERE status = 'ok' GROUP BY prompt_id, model_key)"
    )
    found: int | None = rows[0][0] if rows else None
    return found
