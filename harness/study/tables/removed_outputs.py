"""The `removed_outputs` table: the outputs of a model removed before blinding, kept aside.

`harness collect --remove MODEL` moves a model's rows out of `outputs` into this table, each
with the time of its removal, so nothing the model answered is lost and nothing of it is blinded,
reviewed or analysed. Items made of those outputs by a `judge --blind` that stopped before its
routing go with them (they are derived and made again by the next `judge --blind`); a routed
study never gets here (blinding cannot be undone).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from harness.study.store import Study

_COLUMNS = (
    "output_id, prompt_id, sample, status, backend, model, model_key, model_reported, "
    "system_fingerprint, params, text, finish_reason, prompt_tokens, completion_tokens, "
    "cost_usd, latency_s, attempts, error, started_at, finished_at"
)


@dataclass(frozen=True)
class SetAside:
    """What one removal moved: ok and failed outputs, and unrouted items dropped."""

    ok: int
    failed: int
    items: int


@dataclass(frozen=True)
class RemovedModel:
    """A model's outputs kept aside by one removal."""

    model_key: str
    removed_at: str
    ok: int
    failed: int


def set_aside_outputs(conn: sqlite3.Connection, model_key: str, removed_at: str) -> SetAside:
    """Move every output of `model_key` into `removed_outputs`, inside the caller's transaction;
    the items made of them (never routed: the caller checks) are dropped."""
    ok, failed = conn.execute(
        "SELECT COALESCE(SUM(status = 'ok'), 0), COALESCE(SUM(status = 'failed'), 0) "
        "FROM outputs WHERE model_key = ?",
        (model_key,),
    ).fetchone()
    items = conn.execute(
        "DELETE FROM items WHERE output_id IN (SELECT output_id FROM outputs WHERE model_key = ?)",
        (model_key,),
    ).rowcount
    conn.execute(
        f"INSERT INTO removed_outputs (removed_at, {_COLUMNS}) "
        f"SELECT ?, {_COLUMNS} FROM outputs WHERE model_key = ?",
        (removed_at, model_key),
    )
    conn.execute("DELETE FROM outputs WHERE model_key = ?", (model_key,))
    return SetAside(int(ok), int(failed), int(items))


def removed_models(study: Study) -> list[RemovedModel]:
    """Every removal's model and outputs kept aside, oldest first."""
    rows = study.rows(
        "SELECT model_key, removed_at, SUM(status = 'ok'), SUM(status = 'failed') "
        "FROM removed_outputs GROUP BY removed_at, model_key ORDER BY removed_at, model_key"
    )
    return [RemovedModel(r[0], r[1], int(r[2]), int(r[3])) for r in rows]
