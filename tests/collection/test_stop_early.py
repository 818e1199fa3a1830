"""`harness collect` against servers that cannot serve the study, through the real entry point in
child processes: nothing listening, a web page instead of the API, a client error page, a model
the server does not know. Each stops after three requests (counted by the server, or by the
client's own attempts where nothing listens), with the server's words on one line and exit 1;
what was collected is kept; `harness status` gives the same counts, the reason and the fix;
server errors still retry. The progress row shows the latest failure's reason and keeps its
count and ETA on an 80-column terminal.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from harness.study import Study
from tests.collection.conftest import cli, count_rows, make_study
from tests.servers.model_server import ModelServer
from tests.servers.openai_server import OpenAIServer
from tests.servers.page_server import BAD_GATEWAY, PageServer, refusing_port

MODEL = "openai-compatible/m"
TOPICS = 56  # 168 prompts, as in a study's first pilot


def collect(study: Path, *args: object) -> tuple[int, str, str]:
    process = cli(["collect", "--study", str(study), *(str(a) for a in args)])
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def status(study: Path) -> str:
    process = cli(["status", "--study", str(study)])
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return out


def rows(study: Path) -> list[tuple[str, int]]:
    """(status, attempts) of every stored output."""
    with Study.open(study) as s:
        return [tuple(r) for r in s.rows("SELECT status, attempts FROM outputs ORDER BY 1")]


def last_run(study: Path, key: str = MODEL) -> dict:
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    return manifest["collect"]["models"][key]["runs"][-1]


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error: ")]


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "250")  # the status table unwrapped
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return make_study(tmp_path / "study", TOPICS)


def test_nothing_listening_stops_after_three_attempts_and_a_rerun_resumes(study: Path) -> None:
    hold = refusing_port()
    url = f"http://127.0.0.1:{hold.getsockname()[1]}/v1"
    try:
        code, out, err = collect(study, "--model", MODEL, "--base-url", url)
        assert code == 1 and "Traceback" not in err, err
        assert error_lines(err) == [
            f"error: {MODEL}: stopped after 3 failed requests: connection refused at "
            f"{url}/chat/completions",
            "error: the run left 3 failed and 165 pending completions (exit 1)",
        ]
        assert "study: 0 ok, 3 failed, 165 pending of 168" in out
        assert "no server answered 3 requests in a row, so the other 165 were not sent" in out
        # three connection attempts in all: each failed request was tried once, none retried
        assert rows(study) == [("failed", 1)] * 3
        run = last_run(study)
        assert run["retries"] == 0 and run["stopped"] == "refused"
        assert run["refusal"] == "connection" and "refused" not in run  # no HTTP status

        shown = status(study)
        assert f"{MODEL}: 0 ok, 3 failed, 165 pending of 168 outputs; collect stopped on " in shown
        assert "stopped, 0/168 (0%)" in shown
        next_line = shown.strip().splitlines()[-1]
        assert next_line.startswith(f"Next: {MODEL}: collect stopped on connection refused at")
        assert f"`harness collect --study {study} --retry-errors`" in next_line

        # the server starts on that address: a rerun goes to the recorded one and resumes
        with OpenAIServer(port=hold.getsockname()[1]) as server:
            code, out, err = collect(study, "--retry-errors")
            assert server.log.counts["requests"] == 168
    finally:
        hold.close()
    assert code == 0, err
    assert "study: 168 ok, 0 failed, 0 pending of 168" in out
    assert "collect stopped" not in status(study)


@pytest.mark.parametrize(
    ("options", "words", "refusal"),
    [
        (
            {},  # nginx's welcome page where the API should be
            "HTTP 200 from {url}/chat/completions, not JSON (text/html): Welcome to nginx! If you "
            "see this page, the nginx web server is successfully installed and working.",
            "not_json",
        ),
        (
            {"status": 405, "page": b"<html><body><h1>405 Not Allowed</h1><hr>nginx</body></html>"},
            "HTTP 405: 405 Not Allowed nginx",
            "status",
        ),
    ],
)
def test_a_page_instead_of_the_api_stops_after_three_requests(
    study: Path, options: dict, words: str, refusal: str
) -> None:
    with PageServer(**options) as page, OpenAIServer() as api:
        code, out, err = collect(study, "--model", MODEL, "--base-url", page.base_url)
        assert page.requests == 3
        assert code == 1, err
        (line, _) = error_lines(err)
        assert line.startswith(f"error: {MODEL}: stopped after 3 failed requests: ")
        assert words.format(url=page.base_url) in line
        assert "<" not in line and "JSONDecodeError" not in err and "Traceback" not in err
        assert rows(study) == [("failed", 1)] * 3
        assert last_run(study)["refusal"] == refusal
        # the right address: no output came from the page, so no --new-endpoint is asked for
        code, out, err = collect(study, "--retry-errors", "--base-url", api.base_url)
        assert code == 0, err
        assert page.requests == 3 and api.log.counts["requests"] == 168
    assert f"{MODEL}: endpoint {api.base_url}; no output came from {page.base_url}" in out


def test_a_model_the_server_does_not_know_shows_in_status_with_its_fix(study: Path) -> None:
    typo, right = "openai-compatible/gpt-4o-mnii", "openai-compatible/gpt-4o-mini"
    with ModelServer(models={"gpt-4o-mini"}) as server:
        code, out, err = collect(study, "--model", typo, "--base-url", server.base_url)
        assert code == 1 and server.unknown == ["gpt-4o-mnii"] * 3, err
        assert "study: 0 ok, 3 failed, 165 pending of 168" in out
        shown = status(study)
        # the same counts as collect's, the server's words, and the fix instead of a rerun
        assert (
            f"{typo}: 0 ok, 3 failed, 165 pending of 168 outputs; collect stopped on HTTP 404: "
            "The model `gpt-4o-mnii` does not exist"
        ) in shown
        next_line = shown.strip().splitlines()[-1]
        assert "collect the right name with --model" in next_line
        assert f"`harness collect --study {study} --remove {typo}`" in next_line
        assert "pending)" not in next_line  # not the plain rerun that meets the 404s again

        code, out, err = collect(study, "--model", right, "--base-url", server.base_url)
        assert code == 0, err
        code, out, err = collect(study, "--remove", typo)
        assert code == 0, err
        assert server.unknown == ["gpt-4o-mnii"] * 3
    assert status(study).strip().splitlines()[-1].startswith("Next: harness judge --blind")


def test_server_errors_still_retry_and_the_progress_line_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_PROGRESS_EVERY", "0.1")
    study = make_study(tmp_path / "study", 4)
    # a proxy answering 502 while the model server behind it starts, then the model's answers
    with PageServer(status=502, page=BAD_GATEWAY, pages=4) as proxy:
        code, out, err = collect(study, "--model", MODEL, "--base-url", proxy.base_url)
        assert proxy.requests == 16
    assert code == 0, err
    assert "12 completed, 0 failed, 4 retries" in out
    assert "retries 4 (HTTP 502: 502 Bad Gateway nginx/1.24.0)" in err


def test_a_failed_request_s_reason_shows_in_the_progress_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, serve, faults
) -> None:
    monkeypatch.setenv("HARNESS_PROGRESS_EVERY", "0.05")
    study = make_study(tmp_path / "study", 4)
    server = serve(faults=faults(rate=1.0, kinds=("500",)), latency=0.05)
    code, out, err = collect(
        study, "--model", MODEL, "--base-url", server.base_url, "--max-attempts", "1"
    )
    assert code == 1 and server.log.counts["requests"] == 12  # a 500 may heal: no early stop
    progress = [line for line in err.splitlines() if line.startswith(f"collect {MODEL}: ")]
    assert progress and "errors 12 (HTTP 500: internal error (gave up after 1" in progress[-1]


def test_what_was_collected_is_kept_when_the_server_goes_away(study: Path) -> None:
    with OpenAIServer(latency=0.05) as server:
        args = ["collect", "--study", str(study), "--model", MODEL, "--base-url", server.base_url]
        process = cli([*args, "--concurrency", "2"])
        deadline = time.monotonic() + 60
        while count_rows(study) < 6:
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.02)
        server.kill()  # the port now refuses connections
        out, err = process.communicate(timeout=120)
        assert process.returncode == 1, err
        (line, _) = error_lines(err)
        assert line.startswith(f"error: {MODEL}: stopped after ") and "connection refused" in line
        stored = rows(study)
        ok = sum(1 for s, _ in stored if s == "ok")
        assert ok >= 6 and len(stored) < 168
        server.revive()
        before = server.log.counts["requests"]
        code, out, err = collect(study, "--retry-errors")
        assert code == 0, err
        assert server.log.counts["requests"] - before == 168 - ok  # the ok ones are not asked again
    assert "study: 168 ok, 0 failed, 0 pending of 168" in out


def test_the_progress_bar_keeps_its_count_and_eta_at_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a terminal of 80 columns (rich reads these), drawn once at the end
    for name, value in {"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "0", "NO_COLOR": "1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COLUMNS", "80")
    study = make_study(tmp_path / "study", 4)
    long_name = "openai-compatible/Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4"
    with ModelServer() as server:
        code, out, err = collect(study, "--model", long_name, "--base-url", server.base_url)
    assert code == 0, err
    drawn = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line) for line in err.splitlines()]
    (bar,) = [line for line in drawn if "ETA" in line]
    assert len(bar) <= 80
    assert " 12/12 " in bar and "ETA 0:00:00" in bar
    assert "collect openai-compatible/Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4" not in bar  # cut
