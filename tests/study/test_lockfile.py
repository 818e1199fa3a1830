"""The lock file's hash lands in every manifest entry; `verify` shows it against the running one."""

from __future__ import annotations

import hashlib
from importlib import metadata

import pytest

from harness.status.verify_report import environment_lines
from harness.study import lockfile
from harness.study.manifest import read_manifest, record_command

LOCK = """# comment
numpy==1.0.0 \\
    --hash=sha256:aaaa
typing_extensions=={typing}
    # via pydantic
not-installed-anywhere==0.0.1 ; python_version >= "3.11"
"""


@pytest.fixture
def lock_file(tmp_path, monkeypatch):
    path = tmp_path / "requirements.lock"
    path.write_text(LOCK.format(typing=metadata.version("typing_extensions")), encoding="utf-8")
    monkeypatch.setenv(lockfile.LOCK_ENV, str(path))
    lockfile.lock_record.cache_clear()
    yield path
    lockfile.lock_record.cache_clear()


def test_pins_are_read_with_normalised_names():
    assert lockfile.locked_pins(LOCK.format(typing="4.0")) == {
        "numpy": "1.0.0",
        "typing-extensions": "4.0",
        "not-installed-anywhere": "0.0.1",
    }


def test_manifest_records_the_lock_hash_and_what_differs(lock_file, tmp_path):
    record_command(tmp_path / "s", "generate")
    lock = read_manifest(tmp_path / "s").record()["commands"][0]["lock"]
    assert lock["sha256"] == hashlib.sha256(lock_file.read_bytes()).hexdigest()
    assert lock["packages"] == 3
    assert lock["differs"] == {"numpy": metadata.version("numpy"), "not-installed-anywhere": None}


def test_verify_lines_show_recorded_and_current_lock(lock_file, tmp_path):
    record_command(tmp_path / "s", "generate")
    recorded = hashlib.sha256(lock_file.read_bytes()).hexdigest()[:16]
    lock_file.write_text("numpy==9.9.9\n", encoding="utf-8")
    lockfile.lock_record.cache_clear()
    first, versions = environment_lines(read_manifest(tmp_path / "s").commands or [])
    now = hashlib.sha256(b"numpy==9.9.9\n").hexdigest()[:16]
    assert f"requirements.lock sha256 {recorded} (2 packages installed at other versions)" in first
    assert f"this process: requirements.lock sha256 {now} (1 packages" in first
    assert versions == "package versions as recorded"


def test_without_a_lock_file_nothing_is_claimed(monkeypatch, tmp_path):
    monkeypatch.setenv(lockfile.LOCK_ENV, str(tmp_path / "absent.lock"))
    lockfile.lock_record.cache_clear()
    try:
        assert lockfile.lock_record() is None
    finally:
        lockfile.lock_record.cache_clear()
