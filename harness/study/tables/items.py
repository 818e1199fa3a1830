"""The `items` table: the blinded units reviewers see, one per usable output or control."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness.study.store import Study
from harness.study.text import storable

Steps = list[dict[str, Any]]


@dataclass(frozen=True)
class NewItem:
    """An item as first stored: exactly one of `output_id` and `control_id`, no steps yet."""

    item_id: str
    text: str
    output_id: str | None = None
    control_id: str | None = None


@dataclass(frozen=True)
class ItemSteps:
    """An item's original text and the blinded steps recorded on it."""

    item_id: str
    original_text: str
    steps: Steps


def insert_items(conn: sqlite3.Connection, items: Sequence[NewItem]) -> None:
    """New items, shown as their original text until a step rewrites them (any text stored as
    the store holds it: lone surrogates escaped)."""
    conn.executemany(
        "INSERT INTO items (item_id, output_id, control_id, original_text, core_combination, "
        "display_text, steps) VALUES (?, ?, ?, ?, NULL, ?, '[]')",
        [(i.item_id, i.output_id, i.control_id, storable(i.text), storable(i.text)) for i in items],
    )


def count_items(study: Study) -> int:
    return study.count("items")


def item_ids(study: Study) -> set[str]:
    return {r[0] for r in study.rows("SELECT item_id FROM items")}


def control_item_ids(study: Study) -> list[str]:
    return [r[0] for r in study.rows("SELECT item_id FROM items WHERE control_id IS NOT NULL")]


def item_sources(study: Study) -> dict[str, str]:
    """item_id -> the output or control it shows."""
    return {
        r[0]: r[1] for r in study.rows("SELECT item_id, COALESCE(output_id, control_id) FROM items")
    }


def display_texts(study: Study, shows: Literal["output", "control"]) -> list[str]:
    """The display texts of the items that show an output, or of those that show a control."""
    column = "output_id" if shows == "output" else "control_id"
    return [r[0] for r in study.rows(f"SELECT display_text FROM items WHERE {column} IS NOT NULL")]


def item_steps(study: Study) -> list[ItemSteps]:
    """Every item's original text and steps, by item id."""
    return [
        ItemSteps(r[0], r[1], json.loads(r[2]))
        for r in study.rows("SELECT item_id, original_text, steps FROM items ORDER BY item_id")
    ]


def recorded_steps(study: Study) -> list[Steps]:
    """The steps of every item, in store order."""
    return [json.loads(r[0]) for r in study.rows("SELECT steps FROM items")]


def steps_of(study: Study, item_id: str) -> ItemSteps | None:
    """One item's original text and steps (None for an unknown id)."""
    found = study.rows("SELECT original_text, steps FROM items WHERE item_id = ?", (item_id,))
    return ItemSteps(item_id, found[0][0], json.loads(found[0][1])) if found else None


def set_core_combination(
    conn: sqlite3.Connection, item_id: str, core: str | None, steps: Steps
) -> None:
    conn.execute(
        "UPDATE items SET core_combination = ?, steps = ? WHERE item_id = ?",
        (core, json.dumps(steps), item_id),
    )


def set_display_text(conn: sqlite3.Connection, item_id: str, text: str, steps: Steps) -> None:
    conn.execute(
        "UPDATE items SET display_text = ?, steps = ? WHERE item_id = ?",
        (text, json.dumps(steps), item_id),
    )


def show_original_text(conn: sqlite3.Connection, item_id: str, steps: Steps) -> None:
    """Undo a normalisation: the item shows its original text again."""
    conn.execute(
        "UPDATE items SET display_text = original_text, steps = ? WHERE item_id = ?",
        (json.dumps(steps), item_id),
    )
