"""Damaged or read-only studies get one line and exit 2, never a traceback."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.study.store import DB_NAME
from tests.cli_run import CLI
from tests.cli_run import run_subprocess as harness
from tests.collection.conftest import make_study


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_store_that_is_not_sqlite(tmp_path: Path) -> None:
    folder = make_study(tmp_path / "s", 1)
    (folder / DB_NAME).write_text("this is not a database\n" * 100)
    for command in ("status", "verify"):
        line = one_line_error(harness(command, "--study", str(folder)))
        assert DB_NAME in line and "not a readable study store" in line


def test_a_corrupt_schema_version(tmp_path: Path) -> None:
    import sqlite3

    folder = make_study(tmp_path / "s", 1)
    conn = sqlite3.connect(folder / DB_NAME, isolation_level=None)
    conn.execute("UPDATE meta SET value = 'abc' WHERE key = 'schema_version'")
    conn.close()
    assert "corrupt schema version" in one_line_error(harness("status", "--study", str(folder)))


def _read_only(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI with `folder` bound read-only in a private mount namespace."""
    quoted = shlex.quote(str(folder))
    script = (
        f"mount --bind {quoted} {quoted} && mount -o remount,ro,bind {quoted} {quoted} && "
        + shlex.join([*CLI, *args])
    )
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120
    )


def test_a_read_only_study_can_be_read_but_not_written(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1): cannot make a read-only bind mount here")
    folder = make_study(tmp_path / "s", 2)
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("mount namespaces are not allowed here: cannot make a read-only bind mount")
    for command in ("status", "verify"):
        done = _read_only(folder, command, "--study", str(folder))
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    line = one_line_error(
        _read_only(
            folder,
            "collect",
            "--study",
            str(folder),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "openai/m",
        )
    )
    assert "writable" in line
