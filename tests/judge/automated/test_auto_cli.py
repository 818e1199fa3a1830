"""`harness judge --auto` through the real entry point: refusals store nothing, exit codes."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from harness.study.store import Study
from tests.cli_run import CLI, run_cli, run_subprocess
from tests.literature.conftest import CORPUS, write_jsonl
from tests.literature.study import build_study
from tests.servers.openai_server import OpenAIServer, review_protocol

ROSTER = [("lex", "retrieval"), ("bot", "llm:test-model")]


@pytest.fixture(autouse=True)
def _no_server_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HARNESS_LITERATURE_CACHE", str(tmp_path / "literature-cache"))


@pytest.fixture
def study(tmp_path: Path) -> Path:
    build_study(tmp_path / "study", ROSTER).close()
    return tmp_path / "study"


@pytest.fixture
def corpus(tmp_path: Path) -> str:
    return "local:" + str(write_jsonl(tmp_path / "works.jsonl", [dict(r) for r in CORPUS]))


def snapshot(folder: Path) -> dict[str, str]:
    """Every file of the study folder (WAL and logs included) by name and content hash."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def stored(folder: Path) -> tuple[int, int, int]:
    with Study.open(folder) as s:
        return s.count("reviews"), s.count("searches"), s.count("calibrations")


def test_a_base_url_with_credentials_is_refused_before_anything_is_written(study, corpus):
    before = snapshot(study)
    done = run_subprocess(
        "judge",
        "--auto",
        "--study",
        str(study),
        "--source",
        corpus,
        "--backend",
        "openai",
        "--base-url",
        "http://ada:hunter2pass@127.0.0.1:9/v1",
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "credential (user:password)" in done.stderr and "hunter2pass" not in done.stderr
    assert snapshot(study) == before  # no manifest, no log, no lock note, no review
    assert stored(study) == (0, 0, 0)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("127.0.0.1:9/v1", "not an http:// or https:// URL"),
        ("ftp://127.0.0.1/v1", "not an http:// or https:// URL"),
        ("http:///v1", "names no server"),
        ("http://127.0.0.1:port/v1", "names no server"),
        ("http://127.0.0.1:9/v1?api_key=abc123456", "credential (query parameter 'api_key')"),
        ("http://127.0.0.1 :9/v1", "spaces or control characters"),
    ],
)
def test_a_bad_base_url_is_refused_before_anything_is_written(study, corpus, capsys, url, said):
    before = snapshot(study)
    code, _, err = run_cli(
        capsys,
        "judge",
        "--auto",
        "--study",
        str(study),
        "--source",
        corpus,
        "--backend",
        "openai",
        "--base-url",
        url,
    )
    assert code == 2 and said in err and err.count("\n") == 1
    assert snapshot(study) == before


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--source", "nowhere"], "unknown literature source 'nowhere'"),
        (["--source", "local:/no/such/corpus.jsonl"], "the corpus file does not exist"),
        (["--source", "openalex:x"], "takes no ':' argument"),
        (["--backend", "carrier-pigeon"], "unknown backend 'carrier-pigeon'"),
        (["--backend", "local", "--concurrency", "4"], "--concurrency applies to the openai"),
        # the roster's bare llm:test-model names no provider: the error names reviewer and fix
        (["--concurrency", "4"], "reviewer 'bot' (method: llm:test-model): unknown model"),
        (["--model", "openai/x"], "an automated reviewer's model is its roster method"),
        (["--threshold", "nan"], "--threshold must be a finite number"),
        (["--cutoff", "2024-13-45"], "cutoff"),
    ],
)
def test_every_setting_is_checked_before_anything_is_written(study, corpus, capsys, args, said):
    before = snapshot(study)
    code, _, err = run_cli(
        capsys, "judge", "--auto", "--study", str(study), "--source", corpus, *args
    )
    assert code == 2 and said in err, err
    assert snapshot(study) == before


def test_a_missing_key_for_the_default_server_stores_nothing(study, corpus, capsys):
    """The llm reviewer is built before any review: the retrieval one must not run first."""
    code, _, err = run_cli(
        capsys, "judge", "--auto", "--study", str(study), "--source", corpus, "--backend", "openai"
    )
    assert code == 2 and "OPENAI_API_KEY is not set" in err
    assert stored(study) == (0, 0, 0)
    assert not (study / "manifest.json").exists()


def test_exit_0_when_every_assigned_item_is_reviewed(tmp_path, corpus, capsys):
    build_study(tmp_path / "s", [("lex", "retrieval")]).close()
    code, out, err = run_cli(
        capsys, "judge", "--auto", "--study", str(tmp_path / "s"), "--source", corpus
    )
    assert code == 0, err
    assert stored(tmp_path / "s")[0] == 6 and "lex" in out


def test_exit_1_with_a_summary_when_a_server_refuses_the_requests(study, corpus, capsys):
    with OpenAIServer(api_key="not-the-one-sent") as server:  # every chat request gets 401
        code, out, err = run_cli(
            capsys,
            "judge",
            "--auto",
            "--study",
            str(study),
            "--source",
            corpus,
            "--backend",
            "openai",
            "--base-url",
            server.base_url,
        )
    assert code == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(
        "error: 6 of 12 assigned items are not reviewed yet, 1 reviewer(s) "
        "stopped by a failure; bot: "
    )
    assert "rerun to resume" in last and "Traceback" not in err
    with Study.open(study) as s:  # the retrieval reviewer finished; bot's items stay pending
        assert s.count("reviews", "reviewer_id = 'lex'") == 6
        assert s.count("reviews", "reviewer_id = 'bot'") == 0
    with OpenAIServer(reply_text=review_protocol) as server:  # the rerun resumes, completes
        code, _, err = run_cli(
            capsys,
            "judge",
            "--auto",
            "--study",
            str(study),
            "--source",
            corpus,
            "--backend",
            "openai",
            "--base-url",
            server.base_url,
        )
    assert code == 0, err
    assert stored(study)[0] == 12


def test_exit_130_on_ctrl_c_keeps_whole_reviews(study, corpus):
    with OpenAIServer(latency=0.3, reply_text=review_protocol) as server:
        process = subprocess.Popen(
            [
                *CLI,
                "judge",
                "--auto",
                "--study",
                str(study),
                "--source",
                corpus,
                "--backend",
                "openai",
                "--base-url",
                server.base_url,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        deadline = time.monotonic() + 60
        while server.log.counts["requests"] < 2:
            assert time.monotonic() < deadline and process.poll() is None, process.stderr
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    with Study.open(study) as s:  # each stored review came with its searches
        bot = s.count("reviews", "reviewer_id = 'bot'")
        assert bot < 6
        assert s.count("searches", "reviewer_id = 'bot'") >= bot
        assert (
            s.count(
                "reviews",
                "reviewer_id = 'bot' AND item_id NOT IN "
                "(SELECT item_id FROM searches WHERE reviewer_id = 'bot')",
            )
            == 0
        )


def test_calibrate_refuses_a_bad_url_before_anything_is_written(study, corpus, capsys):
    before = snapshot(study)
    code, _, err = run_cli(
        capsys,
        "judge",
        "--calibrate",
        "--study",
        str(study),
        "--source",
        corpus,
        "--backend",
        "openai",
        "--base-url",
        "http://u:p@h/v1",
    )
    assert code == 2 and "credential" in err
    assert snapshot(study) == before
