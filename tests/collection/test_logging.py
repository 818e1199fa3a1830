"""`--log-level`: requests and retries reach stderr and the study's log file, secrets never do."""

from __future__ import annotations

import re

from tests.collection.conftest import KEY, cli, make_study


def test_retries_are_logged_with_their_reason_and_no_secret(tmp_path, serve, faults):
    server = serve(
        faults=faults(rate=0.6, kinds=("429", "500"), retry_after="0.01"), echo_auth=True
    )
    study = make_study(tmp_path / "log study ü", 3)
    process = cli(
        [
            "--log-level",
            "debug",
            "collect",
            "--study",
            str(study),
            "--backend",
            "openai",
            "--model",
            "gpt-4o-mini",
            "--base-url",
            server.base_url,
            "--max-attempts",
            "4",
        ]
    )
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    log_file = study / "logs" / "harness.log"
    logged = log_file.read_text(encoding="utf-8")
    for text in (err, logged):
        assert re.search(r"retry 1 of 3 in [0-9.]+ s \(Retry-After\): HTTP 429", text), text
        assert re.search(r"retry \d of 3 in [0-9.]+ s: HTTP 500", text), text
        assert re.search(r"POST 127\.0\.0\.1:\d+/v1/chat/completions -> ok in [0-9.]+ s", text)
        assert "command collect finished in" in text
        assert KEY not in text
    assert f"Bearer {KEY}" in server.log.auth_headers  # the key was sent, and echoed back


def test_default_level_keeps_stderr_quiet_but_the_file_gets_info(tmp_path, serve, faults):
    server = serve(faults=faults(rate=0.6, kinds=("503",)))
    study = make_study(tmp_path / "quiet", 2)
    for _ in range(2):  # the file is appended to, run after run
        process = cli(
            [
                "collect",
                "--study",
                str(study),
                "--backend",
                "openai",
                "--model",
                "gpt-4o-mini",
                "--base-url",
                server.base_url,
                "--retry-errors",
            ]
        )
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert "retry" not in err and "POST" not in err
    logged = (study / "logs" / "harness.log").read_text(encoding="utf-8")
    assert logged.count("command collect finished in") == 2
    assert "POST" in logged and " INFO " in logged and " DEBUG " not in logged
