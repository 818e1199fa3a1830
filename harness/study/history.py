"""Whether a study's manifest (its history) is intact, and the explicit way to start it afresh.

A manifest that is missing from a study that has data must never be recreated silently: the
generate and collect history would be gone without a word. Every stage that writes checks this
before it writes anything; `harness verify --rebuild-manifest` takes the writer lock like those
stages (without this check, which would refuse it) and starts a new manifest that records the loss.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from harness.errors import HarnessError
from harness.study.clock import utc_now
from harness.study.files import MANIFEST_NAME as MANIFEST_NAME
from harness.study.files import STORE_NAME
from harness.study.manifest_sections import HistoryLost, Manifest
from harness.study.scrub import scrub

#: Store meta key set when the study's manifest is first written.
SENTINEL = "manifest_created_at"
REBUILD = (
    "run `harness verify --rebuild-manifest --study DIR` to start a new one that records the loss"
)


def read_manifest_file(path: Path) -> Manifest:
    """The manifest at `path`; a damaged file, or a field of the wrong type, in one line."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise HarnessError(
            f"the manifest is damaged ({error.msg}, line {error.lineno}); restore "
            f"it from a backup, or {REBUILD}",
            file=path,
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise HarnessError(
            f"cannot read the manifest ({error}); restore it from a backup, or {REBUILD}", file=path
        ) from None
    if not isinstance(data, dict):
        raise HarnessError(f"the manifest is not a JSON object; {REBUILD}", file=path)
    return Manifest.from_record(data, file=path)


def write_manifest_file(path: Path, manifest: Manifest) -> Manifest:
    """Write `manifest` to `path` atomically (a temporary file, then a rename), as written.

    Secrets are masked first (command lines and server replies may carry what must not be
    kept), and the record is checked again, so that a wrong value is refused before it reaches
    the file. The caller holds the manifest lock, or the writer lock for `rebuild`.
    """
    # through JSON and back: what the file will hold (tuples as lists, numpy floats as floats)
    record = json.loads(json.dumps(scrub(manifest.record())))
    written = Manifest.from_record(record, file=path, writing=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return written


def has_history(folder: Path) -> bool:
    """True when the store records that a manifest was written for this study."""
    db = folder / STORE_NAME
    if not db.exists():
        return False
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return (
                conn.execute("SELECT 1 FROM meta WHERE key = ?", (SENTINEL,)).fetchone() is not None
            )
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False  # Study.open reports a damaged store in its own words


def check_history(folder: str | Path, *, mark: bool = False) -> None:
    """Refuse to go on when the manifest is damaged, or missing from a study that has data.

    With `mark` (a writing stage), a study whose manifest predates the store's note of it gets
    the note now, so that its manifest is guarded from here on.
    """
    folder = Path(folder)
    path = folder / MANIFEST_NAME
    if path.exists():
        read_manifest_file(path)
        if mark:
            mark_started(folder)
    elif has_history(folder):
        raise HarnessError(
            f"the study has data but its manifest is missing; restore it from a "
            f"backup, or {REBUILD}",
            file=path,
        )


def mark_started(folder: Path) -> None:
    """Note in the store that this study has a manifest (called when one is first written)."""
    db = folder / STORE_NAME
    if not db.exists():
        return
    conn = sqlite3.connect(db, isolation_level=None, timeout=30.0)
    try:
        conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (SENTINEL, utc_now()))
    except sqlite3.DatabaseError:
        pass  # a store without a meta table is reported by Study.open
    finally:
        conn.close()


def rebuild(folder: str | Path) -> Path:
    """Start a new manifest for a study whose manifest is missing or damaged, recording the loss.

    A damaged file is kept beside it as `manifest.json.damaged-<time>`. The caller holds the
    study's writer lock (`harness verify --rebuild-manifest` takes it with `check=False`).
    """
    folder = Path(folder)
    path = folder / MANIFEST_NAME
    now = utc_now()
    reason = "missing"
    if path.exists():
        try:
            read_manifest_file(path)
        except HarnessError:
            reason = "damaged"
            os.replace(path, folder / f"{MANIFEST_NAME}.damaged-{now.replace(':', '')}")
        else:
            raise HarnessError("the manifest is intact; nothing to rebuild", file=path)
    lost = HistoryLost(
        at=now,
        reason=f"manifest.json was {reason}; earlier commands, materials hashes "
        "and commitments recorded in it are lost. Re-run `harness verify` and `harness prereg` "
        "to record the materials again.",
    )
    write_manifest_file(path, Manifest(created_at=now, updated_at=now, history_lost=lost))
    mark_started(folder)
    return path
