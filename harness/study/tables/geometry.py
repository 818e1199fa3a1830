"""The `geometry` table: attention measures of a real model per prompt, layer and head."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypedDict

from harness.study.store import Study

if TYPE_CHECKING:
    import pandas as pd

#: (layer, head, entropy in bits, mass JSON {slot: mass}, split index or None)
Measure = tuple[int, int, float, str, float | None]


class ProbePrompt(TypedDict):
    """A prompt as the probe reads it."""

    prompt_id: str
    system: str | None
    text: str
    spans: str  # JSON {slot: [start, end]}


def insert_measures(
    conn: sqlite3.Connection, prompt_id: str, model: str, measures: Iterable[Measure]
) -> None:
    """Add one prompt's measures inside the caller's transaction."""
    conn.executemany(
        "INSERT INTO geometry VALUES (?, ?, ?, ?, ?, ?, ?)",
        ((prompt_id, model, *m) for m in measures),
    )


def unprobed_prompts(study: Study, model: str) -> list[ProbePrompt]:
    """Prompts without measures for `model`, ordered by topic and condition."""
    rows = study.rows(
        "SELECT prompt_id, system, text, spans FROM prompts p WHERE NOT EXISTS "
        "(SELECT 1 FROM geometry g WHERE g.prompt_id = p.prompt_id AND g.model = ?) "
        "ORDER BY topic_id, condition",
        (model,),
    )
    return [ProbePrompt(prompt_id=r[0], system=r[1], text=r[2], spans=r[3]) for r in rows]


def probed_count(study: Study, model: str | None = None) -> int:
    """Prompts with measures, for one model when given."""
    sql = "SELECT COUNT(DISTINCT prompt_id) FROM geometry"
    rows = study.rows(sql + " WHERE model = ?", (model,)) if model is not None else study.rows(sql)
    return int(rows[0][0])


def model_shape(study: Study, model: str) -> tuple[int, int]:
    """(layers, heads) stored for `model`; (0, 0) when it has no measures."""
    layers, heads = study.rows(
        "SELECT MAX(layer) + 1, MAX(head) + 1 FROM geometry WHERE model = ?", (model,)
    )[0]
    return layers or 0, heads or 0


def probed_models(study: Study) -> list[str]:
    return [r[0] for r in study.rows("SELECT DISTINCT model FROM geometry ORDER BY model")]


def measure_count(study: Study, *, head: int | None = None) -> int:
    """Stored measure rows, of one head value when given (-1: the layer means)."""
    if head is None:
        return study.count("geometry")
    return study.count("geometry", "head = ?", (head,))


def measures_frame(study: Study, model: str | None = None) -> pd.DataFrame:
    """Every measure with its prompt's topic and condition, mass still as JSON text."""
    sql = (
        "SELECT g.prompt_id, p.topic_id, p.condition, g.model, g.layer, g.head, g.entropy, "
        "g.mass, g.split_index FROM geometry g JOIN prompts p USING (prompt_id)"
    )
    params: tuple[str, ...] = ()
    if model is not None:
        sql, params = sql + " WHERE g.model = ?", (model,)
    return study.frame(sql + " ORDER BY p.topic_id, p.condition, g.layer, g.head", params)


def split_frame(study: Study, model: str, head: int) -> pd.DataFrame:
    """Topic, condition, layer and split index of one model's rows for one head value."""
    return study.frame(
        "SELECT p.topic_id, p.condition, g.layer, g.split_index FROM geometry g "
        "JOIN prompts p USING (prompt_id) WHERE g.model = ? AND g.head = ?",
        (model, head),
    )


def prompt_means_frame(study: Study, head: int | None) -> pd.DataFrame:
    """Per prompt and model: topic, condition, and entropy and split index averaged over layers
    (rows of one head value when given, else over every row)."""
    where, params = ("WHERE g.head = ?", (head,)) if head is not None else ("", ())
    return study.frame(
        "SELECT p.topic_id, p.condition, g.model, AVG(g.entropy) AS entropy, "
        "AVG(g.split_index) AS split_index "
        f"FROM geometry g JOIN prompts p ON p.prompt_id = g.prompt_id {where} "
        "GROUP BY g.prompt_id, g.model",
        params,
    )
