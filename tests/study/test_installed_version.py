"""The versions a manifest records, read from the Version line alone, are importlib.metadata's."""

from __future__ import annotations

from importlib import metadata

from harness.study.lockfile import installed_version, lock_path, locked_pins
from harness.study.manifest import TRACKED_PACKAGES


def test_every_recorded_package_reads_as_importlib_metadata_reads_it() -> None:
    path = lock_path()
    names = [*TRACKED_PACKAGES, *(locked_pins(path.read_text(encoding="utf-8")) if path else {})]
    assert len(names) > 10
    for name in names:
        try:
            expected: str | None = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected = None
        assert installed_version(name) == expected, name


def test_a_package_not_installed_has_no_version() -> None:
    assert installed_version("no-such-package-anywhere") is None
