"""The plan's limit on an automated reviewer's `unsure` reviews, through the real entry point: a
reviewer whose server replies off its protocol is stopped in one line and nothing it made is
kept, unless the user accepts it; the acceptance is in the manifest and the report."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.study.manifest import read_manifest
from harness.study.store import Study
from tests.cli_run import run_subprocess
from tests.literature.conftest import CORPUS, write_jsonl
from tests.literature.study import build_study
from tests.servers.openai_server import OpenAIServer, chat_reply, review_protocol

ROSTER = [("lex", "retrieval"), ("bot", "llm:openai-compatible/stub")]
HYPOTHESIS = "Cross-field prompts make models combine unpublished ideas more often."


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


def auto(study: Path, corpus: str, *args: str):
    return run_subprocess("judge", "--auto", "--study", str(study), "--source", corpus, *args)


def error_lines(stderr: str) -> list[str]:
    """The error lines of stderr, which must end it (progress lines may come before)."""
    lines = stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("error:")]
    assert errors and lines[-1] == errors[-1], stderr
    return errors


def kept(study: Path, reviewer: str) -> tuple[int, int, int]:
    """(reviews, searches, decision rules) of a reviewer in the store."""
    where = f"reviewer_id = '{reviewer}'"
    with Study.open(study) as s:
        return s.count("reviews", where), s.count("searches", where), s.count("calibrations", where)


def test_a_reviewer_off_its_protocol_stops_in_one_line_and_is_kept_only_when_accepted(
    study: Path, corpus: str
) -> None:
    with OpenAIServer() as server:  # its replies are words, no SEARCH: or VERDICT: line
        done = auto(study, corpus, "--base-url", server.base_url)
        first_reply = chat_reply(server.log.chat_bodies[0], 0)["choices"][0]["message"]
        requests = server.log.counts["requests"]
    assert done.returncode == 1, done.stderr
    assert error_lines(done.stderr) == [
        "error: reviewer 'bot' (method: llm:openai-compatible/stub): 5 of 5 reviews unsure, "
        "above the plan's limit 0.5 (outcome.max_unsure_share); 5 broke its reply protocol, "
        f"e.g. reply {first_reply['content']!r}; its 5 reviews, their searches and its decision "
        "rule are discarded and do not enter the analysis: fix the reviewer and rerun, or rerun "
        "with --accept-unsure bot to keep what it produces"
    ]
    # stopped after five reviews of two replies each (the reply, and the one after a reminder)
    assert requests == 10
    assert kept(study, "bot") == (0, 0, 0) and kept(study, "lex")[0] == 6
    record = read_manifest(study).record()["unsure_limit"]["discarded"][-1]
    assert {k: record[k] for k in ("reviewer_id", "reviews", "unsure", "off_protocol")} == {
        "reviewer_id": "bot",
        "reviews": 5,
        "unsure": 5,
        "off_protocol": 5,
    }
    assert record["discarded"] == 5 and record["limit"] == 0.5
    # its items are pending again: analyze does not unblind without them
    done = run_subprocess("analyze", "--study", str(study), "--allow-deviation")
    assert done.returncode == 2 and "bot 6" in done.stderr, done.stderr

    with OpenAIServer() as server:  # accepted: the same replies are kept this time
        done = auto(study, corpus, "--base-url", server.base_url, "--accept-unsure", "bot")
    assert done.returncode == 0, done.stderr
    with Study.open(study) as s:
        verdicts = [r[0] for r in s.rows("SELECT verdict FROM reviews WHERE reviewer_id = 'bot'")]
    assert verdicts == ["unsure"] * 6
    manifest = read_manifest(study).record()
    accepted = manifest["unsure_limit"]["accepted"]["bot"]
    assert (accepted["reviews"], accepted["unsure"], accepted["off_protocol"]) == (6, 6, 6)
    assert accepted["accepted_by"] == "harness judge --auto --accept-unsure bot"
    run = [c for c in manifest["commands"] if c["stage"] == "judge --auto"][-1]
    assert run["params"]["accept_unsure"] == ["bot"]

    done = run_subprocess("analyze", "--study", str(study), "--allow-deviation", "--partial")
    assert done.returncode == 0, done.stderr
    banner = (
        "UNSURE LIMIT PASSED: automated reviewer 'bot' (llm:openai-compatible/stub) had 6 of 6 "
        "reviews unsure, 6 of them off its reply protocol, above the plan's limit 0.5 "
        "(outcome.max_unsure_share); its reviews are in this analysis because they were "
        "accepted (harness judge --auto --accept-unsure bot, "
    )
    assert banner in done.stdout
    assert banner in (study / "report" / "report.md").read_text(encoding="utf-8")
    report = json.loads((study / "report" / "report.json").read_text(encoding="utf-8"))
    assert any(note.startswith(banner) for note in report["notes"])


def test_a_reviewer_that_follows_its_protocol_is_kept_without_a_word(
    study: Path, corpus: str
) -> None:
    with OpenAIServer(reply_text=review_protocol) as server:
        done = auto(study, corpus, "--base-url", server.base_url)
    assert done.returncode == 0, done.stderr
    assert kept(study, "bot")[0] == 6 and "unsure_limit" not in read_manifest(study).record()


def test_the_limit_is_the_preregistered_plans(study: Path, corpus: str, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"version: 1\nhypothesis: {HYPOTHESIS}\noutcome:\n  max_unsure_share: 1\n",
        encoding="utf-8",
    )
    assert run_subprocess("prereg", "--study", str(study), "--plan", str(plan)).returncode == 0
    with OpenAIServer() as server:  # off its protocol, but the plan sets no limit
        done = auto(study, corpus, "--base-url", server.base_url)
    assert done.returncode == 0, done.stderr
    assert kept(study, "bot")[0] == 6 and "unsure_limit" not in read_manifest(study).record()
    plan.write_text(plan.read_text().replace("share: 1", "share: 1.5"), encoding="utf-8")
    done = run_subprocess("prereg", "--study", str(tmp_path / "other"), "--plan", str(plan))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: {plan}:4: outcome.max_unsure_share: Input should be less than or equal to 1"
    )


def test_a_retrieval_reviewer_is_held_to_the_limit_too(tmp_path: Path, corpus: str) -> None:
    study = tmp_path / "study"
    with build_study(study, [("lex", "retrieval")]) as s, s.transaction() as conn:
        # items with no word to search for: the retrieval reviewer can only say unsure
        conn.execute(
            "UPDATE items SET core_combination = NULL, display_text = 'the of and' "
            "WHERE item_id IN (SELECT item_id FROM items ORDER BY item_id LIMIT 4)"
        )
    done = auto(study, corpus)
    assert done.returncode == 1, done.stderr
    assert error_lines(done.stderr) == [
        "error: reviewer 'lex' (method: retrieval): 4 of 6 reviews unsure, above the plan's "
        "limit 0.5 (outcome.max_unsure_share); its 6 reviews, their searches and its decision "
        "rule are discarded and do not enter the analysis: fix the reviewer and rerun, or rerun "
        "with --accept-unsure lex to keep what it produces"
    ]
    assert kept(study, "lex") == (0, 0, 0)


def test_accepting_a_reviewer_the_roster_lacks_is_refused_before_anything_is_written(
    study: Path, corpus: str
) -> None:
    def snapshot() -> dict[str, str]:
        return {
            str(p.relative_to(study)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(study.rglob("*"))
            if p.is_file()
        }

    before = snapshot()
    done = auto(study, corpus, "--accept-unsure", "nobody", "--base-url", "http://127.0.0.1:9/v1")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --accept-unsure: --accept-unsure nobody: the roster has no automated reviewer "
        "of that id (automated reviewers: bot, lex)"
    )
    assert snapshot() == before


def test_a_calibration_off_its_protocol_stores_nothing(tmp_path: Path, corpus: str) -> None:
    from tests.judge.calibration_study import controls_study

    study = tmp_path / "calibrated"
    controls_study(study, ROSTER).close()
    with OpenAIServer() as server:  # words, no SEARCH: or VERDICT: line
        done = run_subprocess(
            "judge", "--calibrate", "--study", str(study), "--source", corpus,
            "--base-url", server.base_url,
        )  # fmt: skip
    assert done.returncode == 1, done.stdout
    # the one line names the reviewer, the server's words and the way out; stdout does not
    # repeat it
    (line,) = error_lines(done.stderr)
    assert line.startswith(
        "error: calibration of 1 of 2 automated reviewer(s) failed; bot: reviewer 'bot' (method: "
        "llm:openai-compatible/stub): calibration: "
    ), line
    assert "reviews unsure, above the plan's limit 0.5 (outcome.max_unsure_share)" in line
    assert "broke its reply protocol, e.g. reply " in line
    assert line.endswith(
        f"nothing of its calibration is stored; rerun harness judge --auto --study {study} "
        "--base-url URL of a server whose openai-compatible/stub follows the reviewer's reply "
        f"protocol; or leave its items out: harness analyze --study {study} --partial (a "
        "recorded deviation)"
    ), line
    assert not any(x.startswith("bot: ") for x in done.stdout.splitlines()), done.stdout
    assert kept(study, "bot") == (0, 0, 0) and kept(study, "lex")[2] == 1
    assert read_manifest(study).record()["auto_failures"]["bot"]["stage"] == "calibration"
