"""The lock file the environment was installed from: its SHA-256, and whether it still matches.

`requirements.lock` sits at the root of a source checkout (`make demo` and `make test` install
from it). A study's manifest records its hash with every command, next to the package versions,
so the environment of a study can be recreated exactly; `harness verify` compares.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import cache
from importlib import metadata
from pathlib import Path

from harness.study.records import JsonObject

LOCK_NAME = "requirements.lock"
#: Another lock file to record (for installs outside a source checkout).
LOCK_ENV = "HARNESS_LOCK_FILE"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", re.MULTILINE)


def lock_path() -> Path | None:
    """$HARNESS_LOCK_FILE, else the lock file of the source checkout this package runs from."""
    override = os.environ.get(LOCK_ENV)
    if override:
        return Path(override)
    path = Path(__file__).resolve().parents[2] / LOCK_NAME
    return path if path.is_file() else None


def locked_pins(text: str) -> dict[str, str]:
    """Package (normalised name) -> version of every `name==version` line."""
    return {_normal(name): version for name, version in _PIN.findall(text)}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_differences(pins: dict[str, str]) -> dict[str, str | None]:
    """Locked packages whose installed version differs: name -> installed version (None: absent)."""
    out: dict[str, str | None] = {}
    for name, version in sorted(pins.items()):
        found = installed_version(name)
        if found != version:
            out[name] = found
    return out


#: the Version field of a distribution's metadata (a version has no spaces)
_VERSION = re.compile(r"^Version:[ \t]*(\S+)", re.MULTILINE)


def installed_version(name: str) -> str | None:
    """`importlib.metadata.version(name)` (None where it is not installed), reading only the
    Version line of the distribution's metadata: parsing all of it as email headers, as
    `metadata.version` does, took a few tenths of a second over the lock's packages, on every
    command that records itself."""
    try:
        found = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    text = found.read_text("METADATA") or found.read_text("PKG-INFO") or ""
    version = _VERSION.search(text.split("\n\n", 1)[0])
    return version.group(1) if version else found.version


@cache
def lock_record() -> JsonObject | None:
    """{file, sha256, packages, differs} of the lock file, or None without one."""
    path = lock_path()
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    pins = locked_pins(data.decode("utf-8", errors="replace"))
    return {
        "file": path.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "packages": len(pins),
        "differs": {**installed_differences(pins)},  # a copy typed as JSON values
    }
