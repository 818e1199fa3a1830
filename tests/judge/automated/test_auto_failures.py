"""An automated reviewer that fails, through the real entry point against a loopback server:
`judge --auto` ends in one line naming the reviewer, the server's words and the way out (no
traceback, on every rerun, whatever the flags), the manifest records the run and the failure,
and `harness status` names the way out instead of the command that failed, until a run of the
reviewer succeeds. A study not blinded yet is refused in one line; the reviewers' table fits the
terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.study.manifest import read_manifest, record_section
from harness.study.manifest_sections import Prereg
from harness.study.store import Study
from tests.cli_run import run_subprocess
from tests.judge.calibration_study import controls_study
from tests.judge.conftest import fill_study
from tests.literature.conftest import CORPUS, write_jsonl
from tests.literature.study import build_study
from tests.servers.openai_server import OpenAIServer, chat_reply, review_protocol

BOT = [("auto-llm", "llm:openai-compatible/stub")]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HARNESS_LITERATURE_CACHE", str(tmp_path / "literature-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def corpus(tmp_path: Path) -> str:
    return "local:" + str(write_jsonl(tmp_path / "works.jsonl", [dict(r) for r in CORPUS]))


def auto(study: Path, corpus: str, server: OpenAIServer, *args: str):
    return run_subprocess(
        "judge", "--auto", "--study", str(study), "--source", corpus,
        "--base-url", server.base_url, *args,
    )  # fmt: skip


def last_error(stderr: str) -> str:
    """The one error line, which ends stderr (progress lines may come before), and no
    traceback anywhere."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert lines and lines[-1].startswith("error: "), stderr
    assert sum(line.startswith("error: ") for line in lines) == 1, stderr
    return lines[-1]


def next_line(study: Path) -> str:
    done = run_subprocess("status", "--study", str(study))
    assert done.returncode == 0, done.stderr
    return next(x for x in done.stdout.splitlines() if x.startswith(("Next:", "Done:")))


def way_out(study: Path, does: str) -> str:
    return (
        f"rerun harness judge --auto --study {study} --base-url URL of a server whose "
        f"openai-compatible/stub {does}"
    )


def partial(study: Path) -> str:
    return f"or leave its items out: harness analyze --study {study} --partial"


def test_a_calibration_off_its_protocol_ends_judge_auto_in_one_line_and_status_leads_out(
    tmp_path: Path, corpus: str
) -> None:
    study = tmp_path / "study"
    controls_study(study, BOT).close()
    # the preregistration, so that the next step is about the reviews
    record_section(study, "prereg", Prereg(at="2999-01-01T00:00:00Z", plan_sha256="0" * 64))
    runs = ([], ["--accept-unsure", "auto-llm"], ["--threshold", "0.6"])
    with OpenAIServer() as server:  # its replies are words: no SEARCH: or VERDICT: line
        for extra in runs:
            done = auto(study, corpus, server, *extra)
            assert done.returncode == 1, (extra, done.stderr)
            line = last_error(done.stderr)
            reply = chat_reply(server.log.chat_bodies[0], 0)["choices"][0]["message"]["content"]
            assert line.startswith(
                "error: 13 of 13 assigned items are not reviewed yet, 1 reviewer(s) stopped by a "
                "failure; auto-llm: reviewer 'auto-llm' (method: llm:openai-compatible/stub): "
                "calibration: 5 of 5 reviews unsure, above the plan's limit 0.5 "
                "(outcome.max_unsure_share); 5 broke its reply protocol, e.g. reply "
                f"'{reply[:40]}"
            ), line
            assert line.endswith(
                f"nothing of its calibration is stored{accepted(extra)}; "
                f"{way_out(study, 'follows the reviewer' + chr(39) + 's reply protocol')}; "
                f"{partial(study)} (a recorded deviation); finished reviews are kept"
            ), line
    with Study.open(study) as s:
        assert s.count("reviews") == s.count("calibrations") == 0
    manifest = read_manifest(study).record()
    runs_recorded = [c for c in manifest["commands"] if c["stage"] == "judge --auto"]
    assert len(runs_recorded) == 3
    (reviewer,) = runs_recorded[-1]["params"]["reviewers"]
    assert reviewer["id"] == "auto-llm" and reviewer["rule"] is None
    assert "5 broke its reply protocol" in reviewer["failed"]
    failure = manifest["auto_failures"]["auto-llm"]
    assert failure["stage"] == "calibration" and failure["method"] == BOT[0][1]

    step = next_line(study)
    assert step.startswith("Next: automated reviewer auto-llm failed in its last run ("), step
    assert way_out(study, "follows the reviewer's reply protocol") in step
    # the study's one human reviewer has one item outstanding besides
    assert partial(study) in step and step.endswith("14 of 14 assigned reviews are outstanding")
    assert "--import or --auto adds them" not in step

    with OpenAIServer(reply_text=review_protocol) as server:  # fixed: the run finishes
        done = auto(study, corpus, server)
    assert done.returncode == 0, done.stderr
    assert read_manifest(study).record()["auto_failures"] == {}
    assert next_line(study).startswith("Next: reviews: 1 of 14 assigned reviews outstanding")


def accepted(extra: list[str]) -> str:
    """What the line adds when --accept-unsure names the reviewer whose calibration failed."""
    if "--accept-unsure" not in extra:
        return ""
    return (
        "; --accept-unsure auto-llm keeps reviews above the limit, not a calibration (a "
        "threshold chosen on unsure replies measures nothing)"
    )


def test_a_server_that_refuses_every_request_is_named_with_its_way_out(
    tmp_path: Path, corpus: str
) -> None:
    study = tmp_path / "study"
    build_study(study, BOT).close()  # no calibration controls: the reviews fail
    record_section(study, "prereg", Prereg(at="2999-01-01T00:00:00Z", plan_sha256="0" * 64))
    with OpenAIServer(api_key="not-the-one-sent") as server:  # every chat request gets 401
        done = auto(study, corpus, server)
    assert done.returncode == 1, done.stderr
    line = last_error(done.stderr)
    assert line.startswith(
        "error: 6 of 6 assigned items are not reviewed yet, 1 reviewer(s) stopped by a "
        "failure; auto-llm: "
    ), line
    assert "401" in line and line.endswith("finished reviews are kept, rerun to resume"), line
    step = next_line(study)
    assert step.startswith("Next: automated reviewer auto-llm failed in its last run ("), step
    assert "401" in step and way_out(study, "answers") in step and partial(study) in step


def test_a_study_not_blinded_is_refused_in_one_line(tmp_path: Path, corpus: str) -> None:
    study = tmp_path / "study"
    fill_study(study, n_topics=2).close()
    before = _files(study)
    for mode in ("--auto", "--calibrate"):
        done = run_subprocess("judge", mode, "--study", str(study), "--source", corpus)
        assert done.returncode == 2, (mode, done.stdout, done.stderr)
        assert done.stdout == ""  # no empty table
        assert done.stderr.strip().splitlines() == [
            f"error: {study}: no items are routed to reviewers yet: run `harness judge --blind "
            f"--study {study} --reviewers ROSTER` first (it makes the blinded items and routes "
            "them to the roster's reviewers, automated ones included)"
        ]
    assert _files(study) == before


def _files(folder: Path) -> dict[str, bytes]:
    """The study's store and manifest as they are (the command log may grow)."""
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_the_failed_column_fits_the_terminal_and_the_error_line_holds_it_whole(
    tmp_path: Path, corpus: str
) -> None:
    study = tmp_path / "study"
    build_study(study, [("lex", "retrieval"), ("bot", "llm:openai-compatible/stub")]).close()
    with OpenAIServer() as server:  # off its protocol: the unsure limit discards its reviews
        done = auto(study, corpus, server)
    assert done.returncode == 1, done.stderr
    line = last_error(done.stderr)
    table = done.stdout.splitlines()
    assert table[0].split() == [
        "reviewer_id", "method", "rule", "threshold", "assigned", "reviewed", "pending", "new",
        "published", "not_published", "unsure", "failed", "discarded",
    ]  # fmt: skip
    assert max(len(x) for x in table) <= 200, table
    (bot,) = [x for x in table if x.split()[0] == "bot"]
    cell = bot[table[0].index("unsure") + len("unsure") :].rsplit(maxsplit=1)[0].strip()
    # the reviewer and method are the row's; the cell keeps what follows, cut with "..."
    assert cell.startswith("5 of 5 reviews unsure, above the plan's limit") and cell.endswith(
        "..."
    ), cell
    assert line.startswith("error: reviewer 'bot' (method: llm:openai-compatible/stub): 5 of 5 ")
    assert line.endswith("rerun with --accept-unsure bot to keep what it produces"), line
    failure = json.loads((study / "manifest.json").read_text(encoding="utf-8"))["auto_failures"]
    assert failure["bot"]["stage"] == "discarded"
    assert "or keep what it produces with --accept-unsure bot" in failure["bot"]["fix"]
