"""Usage errors through the real entry point: one short message, exit code 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import harness

ROOT = Path(harness.__file__).resolve().parent.parent


def run_harness(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m harness.cli ARGS` in a fresh process, with this checkout first on the path."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        cwd=cwd,
        timeout=120,
    )


# a bad --cutoff is one line, as the stages say it: tests/cli/test_judge_modes.py
CASES = {
    "missing option": (["generate"], "Missing option '--study'"),
    "unknown option": (["collect", "--bogus"], "No such option: --bogus"),
    "unknown command": (["colect"], "No such command"),
    "negative count": (["collect", "--study", "s", "--samples", "-1"], "--samples"),
    "zero rate": (["collect", "--study", "s", "--rpm", "0"], "--rpm"),
    "not a number": (["generate", "--study", "s", "--limit", "abc"], "--limit"),
    "limit out of range": (["search", "q", "--limit", "5000"], "--limit"),
    "probability out of range": (["power", "--alpha", "1.5"], "--alpha"),
    "bad log level": (["--log-level", "loud", "status", "--study", "s"], "--log-level"),
}


@pytest.mark.parametrize("args, message", CASES.values(), ids=CASES.keys())
def test_usage_error_is_short_and_exits_2(args, message):
    result = run_harness(*args)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 5
    assert "Try 'harness" in result.stderr  # the usage hint names the command as typed


def test_missing_file_is_one_line(tmp_path):
    result = run_harness(
        "generate", "--study", str(tmp_path / "s"), "--topics", str(tmp_path / "no-such-bank.yaml")
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ")
    assert "no-such-bank.yaml" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_study_is_one_line(tmp_path):
    result = run_harness("status", "--study", str(tmp_path / "nothing"))
    assert result.returncode == 2
    folder = tmp_path / "nothing"
    assert result.stderr.strip().splitlines() == [
        f"error: {folder}: no study here (study.sqlite is missing); start one with "
        f"`harness generate --study {folder}` or `harness run --study {folder}`"
    ]


def test_version():
    result = run_harness("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"harness {harness.__version__}"
    assert result.stderr == ""


def test_help_exits_0():
    result = run_harness("--help")
    assert result.returncode == 0
    assert "--log-level" in result.stdout and "--version" in result.stdout


@pytest.mark.parametrize(
    ("family", "aborts"),
    [("click.exceptions", "click.exceptions"), ("typer._click.exceptions", "typer.exceptions")],
)
def test_both_exception_families_are_usage_errors(family, aborts):
    """typer up to 0.2x raises click's exceptions, later typer its own copies."""
    from harness.cli import _kind

    module = pytest.importorskip(family)
    assert _kind(module.NoSuchOption("--bogus")) == "usage"
    assert _kind(module.BadParameter("bad")) == "usage"
    assert _kind(pytest.importorskip(aborts).Abort()) == "abort"
    assert _kind(ValueError("not the parser's")) is None
