"""The `prompts` table: one rendered prompt per topic and condition."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, fields
from operator import attrgetter

from harness.study.store import Study


@dataclass(frozen=True)
class PromptRecord:
    prompt_id: str
    topic_id: str
    condition: str
    family: str
    template_sha256: str
    system: str | None
    text: str
    n_tokens: int
    spans: str  # JSON {slot: [start, end]}

    def span_map(self) -> dict[str, tuple[int, int]]:
        """Each slot's (start, end) in `text`."""
        return {slot: (span[0], span[1]) for slot, span in json.loads(self.spans).items()}


@dataclass(frozen=True)
class PromptMessage:
    """What a model is sent for one prompt."""

    prompt_id: str
    system: str | None
    text: str


_COLUMNS = tuple(f.name for f in fields(PromptRecord))
_SELECT = ", ".join(_COLUMNS)
_INSERT = f"INSERT INTO prompts ({_SELECT}) VALUES ({', '.join('?' * len(_COLUMNS))})"


def insert_prompts(conn: sqlite3.Connection, prompts: Iterable[PromptRecord]) -> None:
    """Add prompts inside the caller's transaction."""
    values = attrgetter(*_COLUMNS)
    conn.executemany(_INSERT, (values(p) for p in prompts))


def stored_prompts(study: Study) -> list[PromptRecord]:
    """Every prompt in the order it was stored."""
    return [
        PromptRecord(*row) for row in study.rows(f"SELECT {_SELECT} FROM prompts ORDER BY rowid")
    ]


def prompt_messages(study: Study) -> list[PromptMessage]:
    """System message and text of every prompt, ordered by prompt id."""
    rows = study.rows("SELECT prompt_id, system, text FROM prompts ORDER BY prompt_id")
    return [PromptMessage(*row) for row in rows]


def prompt_count(study: Study) -> int:
    return study.count("prompts")
