"""What `generate` keeps in the user cache between runs: JSON files, each written whole.

A file that cannot be read or parsed counts as absent (it is rebuilt), so a damaged cache never
stops a command.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.defaults import cache_dir


def cache_file(kind: str, name: str) -> Path:
    """`<user cache>/<kind>/<name>` (`$HARNESS_CACHE` or ~/.cache/harness)."""
    return cache_dir(kind) / name


def read_cached(path: Path) -> object | None:
    """The parsed file, or None where it is missing or unreadable."""
    try:
        value: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value


def write_cached(path: Path, value: object) -> None:
    """`value` as JSON, written whole (`write_whole`)."""
    write_whole(path, json.dumps(value, ensure_ascii=False))


def write_whole(path: Path, text: str) -> None:
    """Write to a temporary sibling, then rename: a reader never sees half a file. A cache that
    cannot be written is skipped (the next run computes the value again)."""
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
