"""Studies with prompts (rows inserted directly) and the loopback OpenAI server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.study import Study
from tests.models.conftest import faults, serve  # noqa: F401  (fixtures)

KEY = "sk-test-collect-Zq8vT3kP0wXy"
CONDITIONS = ("single_a", "single_b", "cross")


def make_study(path: Path, topics: int) -> Path:
    """A study with `topics` topics and their three prompts each."""
    with Study.open(path, create=True) as study, study.transaction() as conn:
        for i in range(topics):
            tid = f"t{i:03d}"
            conn.execute(
                "INSERT INTO topics VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    tid,
                    "Physics",
                    31,
                    "Physical Sciences",
                    "Economics",
                    20,
                    "Social Sciences",
                    json.dumps([f"wave {i}", "resonance"]),
                    json.dumps([f"market {i}", "auction"]),
                    "a shared mechanism",
                    3,
                    0.7,
                    "{}",
                ),
            )
            for condition in CONDITIONS:
                conn.execute(
                    "INSERT INTO prompts VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        f"{tid}.{condition}",
                        tid,
                        condition,
                        "family-1",
                        "0" * 64,
                        "Answer in one sentence." if i % 2 else None,
                        f"Relate concept {i} to {condition} through a shared mechanism.",
                        12,
                        "{}",
                    ),
                )
    return path


def outputs(path: Path) -> list[tuple]:
    with Study.open(path) as study:
        return [
            tuple(r)
            for r in study.rows(
                "SELECT output_id, prompt_id, sample, status, text, finish_reason, prompt_tokens, "
                "completion_tokens, model_reported, system_fingerprint, error FROM outputs "
                "ORDER BY prompt_id, sample"
            )
        ]


def count_rows(path: Path) -> int:
    with Study.open(path) as study:
        return study.count("outputs")


def cli(args: list[str], key: str = KEY, **popen) -> subprocess.Popen:
    """`harness ARGS` in a child process with the API key in its environment."""
    env = {**os.environ, "OPENAI_API_KEY": key}
    # A shell's background job starts with SIGINT ignored, and Python then installs no Ctrl-C
    # handler; give the child the default disposition, as a terminal would.
    popen.setdefault("preexec_fn", lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return subprocess.Popen(
        [sys.executable, "-c", "from harness.cli import main; main()", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


@pytest.fixture
def study(tmp_path):
    return make_study(tmp_path / "study", 4)


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return KEY
