"""The names of a study folder's files. Only `harness/study/` spells them; code elsewhere asks
here (`is_study`, `store_path`, `manifest_path`), so a renamed file changes one module."""

from __future__ import annotations

from pathlib import Path

STORE_NAME = "study.sqlite"
MANIFEST_NAME = "manifest.json"
#: Serialises manifest writes (readers and writers of the manifest, not of the store).
MANIFEST_LOCK_NAME = ".manifest.lock"
#: The writer lock (`harness.study.lock`) and the note naming its holder.
LOCK_NAME = ".study.lock"
HOLDER_NAME = ".study.lock.json"


def store_path(folder: str | Path) -> Path:
    """The study's SQLite store inside `folder`."""
    return Path(folder) / STORE_NAME


def manifest_path(folder: str | Path) -> Path:
    """The study's manifest (its provenance and history) inside `folder`."""
    return Path(folder) / MANIFEST_NAME


def is_study(folder: str | Path) -> bool:
    """True when `folder` holds a study store (whatever its state)."""
    return store_path(folder).exists()
