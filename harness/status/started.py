"""Refuse, in one line, a folder that is no study or a study in which nothing has run."""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.study import Study
from harness.study.history import MANIFEST_NAME, check_history
from harness.study.store import DB_NAME
from harness.study.tables.prompts import prompt_count


def check_started(path: str | Path) -> None:
    """Refuse, as one line, a folder that is no study, a study whose manifest is gone although
    it has data, and a store in which nothing has run (no manifest, no prompts)."""
    folder = Path(path)
    start = f"start one with `harness generate --study {folder}` or `harness run --study {folder}`"
    if not (folder / DB_NAME).exists():
        raise HarnessError(f"no study here ({DB_NAME} is missing); {start}", file=folder)
    with Study.open(folder) as s:  # a damaged store or a newer schema: its own line
        prompts = prompt_count(s)
    check_history(folder)  # a study with data but no manifest: exit 2
    if not prompts and not (folder / MANIFEST_NAME).exists():
        raise HarnessError(
            f"nothing has run in this study yet (no manifest, no prompts); {start}", file=folder
        )
