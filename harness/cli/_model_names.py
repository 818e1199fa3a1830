"""The models `collect --model` names, checked before the study is opened: a refused name must
leave the study folder as it was, and opening a study starts its command log."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from harness.errors import HarnessError
from harness.study.store import DB_NAME


def check_model_names(study: Path, models: list[str] | None, backend: str | None) -> None:
    """Refuse a `--model` the resolver refuses, unless it is the older habit that `collect`
    still reads: a bare NAME that resumes the study's own model of that name."""
    from harness.models.providers import resolve_model

    for text in models or []:
        try:
            resolve_model(text, backend)
        except HarnessError:
            if backend is None and "/" not in text and text in _stored_names(study):
                continue
            raise


def _stored_names(study: Path) -> set[str]:
    """The model names (as requested) of the study's collected models, read without writing:
    immutable, so SQLite makes no shared-memory file, unless a write-ahead log holds data."""
    db = study / DB_NAME
    if not db.exists():
        return set()
    wal = db.with_name(db.name + "-wal")
    mode = "mode=ro" if wal.exists() and wal.stat().st_size else "immutable=1"
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?{mode}", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'collect_models'").fetchone()
        finally:
            conn.close()
        stored = json.loads(row[0]) if row and row[0] else {}
    except (sqlite3.DatabaseError, ValueError):
        return set()  # `collect` reports a damaged store in its own words
    return {str(s.get("model")) for s in stored.values() if isinstance(s, dict)}
