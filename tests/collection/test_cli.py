"""`harness collect` as users run it: flags, summary, exit codes, Ctrl-C, secrets."""

from __future__ import annotations

import signal
import time

import pytest

from harness.cli import main
from harness.study import Study
from harness.study.manifest import read_manifest
from tests.collection.conftest import KEY, cli, count_rows, make_study, outputs


def test_cli_collects_and_prints_a_summary(study, serve, key, capsys):
    server = serve()
    main(
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
            "--samples",
            "2",
            "--max-tokens",
            "9",
            "--top-p",
            "0.5",
            "--rpm",
            "100000",
            "--tpm",
            "10000000",
            "--timeout",
            "5",
            "--max-attempts",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert "24 completed, 0 failed" in out and "0 pending of 24" in out
    assert server.log.chat_bodies[0]["max_tokens"] == 9
    assert server.log.chat_bodies[0]["top_p"] == 0.5


def test_cli_user_errors_exit_2_with_one_line(study, capsys, key):
    with pytest.raises(SystemExit) as caught:
        main(["collect", "--study", str(study), "--backend", "local", "--rpm", "10"])
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--rpm does not apply to the local backend" in err
    with pytest.raises(SystemExit) as caught:
        main(["collect", "--study", str(study), "--backend", "nope"])
    assert caught.value.code == 2 and "unknown backend" in capsys.readouterr().err


def test_a_run_whose_requests_all_fail_exits_1(study, key, serve, faults):
    # server errors may heal, so the run goes on (a server that is not there stops it early:
    # tests/collection/test_stop_early.py)
    server = serve(faults=faults(rate=1.0, kinds=("500",)))
    process = cli(
        [
            "collect",
            "--study",
            str(study),
            "--backend",
            "openai",
            "--model",
            "m",
            "--base-url",
            server.base_url,
            "--max-attempts",
            "1",
        ]
    )
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, err
    assert "Traceback" not in err
    assert "12 failed and 0 pending" in err and "12 failed" in out
    assert server.log.counts["requests"] == 12


def test_ctrl_c_stops_cleanly_and_keeps_work(tmp_path, serve):
    study = make_study(tmp_path / "s", 20)
    server = serve(latency=0.05)
    args = [
        "collect",
        "--study",
        str(study),
        "--backend",
        "openai",
        "--model",
        "gpt-4o-mini",
        "--base-url",
        server.base_url,
        "--concurrency",
        "2",
    ]
    process = cli(args)
    deadline = time.monotonic() + 60
    while count_rows(study) < 4:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted" in out and "rerun to resume" in out
    kept = count_rows(study)
    assert 4 <= kept < 60
    rest = cli(args)
    rest.communicate(timeout=120)
    assert rest.returncode == 0 and count_rows(study) == 60


def test_api_key_never_reaches_the_study_folder(tmp_path, serve, faults):
    server = serve(faults=faults(rate=0.5, kinds=("500", "503")), echo_auth=True, batch_delay=0.05)
    for name, extra in (("direct", []), ("batch", ["--batch-api"])):
        study = make_study(tmp_path / name, 3)
        args = [
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
            "1",
            *extra,
        ]
        process = cli(args)
        out, err = process.communicate(timeout=120)
        assert process.returncode == 1, err  # partial work: some requests ended failed
        assert "failed" in err.splitlines()[-1]
        assert KEY not in out + err
        with Study.open(study) as handle:
            assert handle.count("outputs", "status = 'failed'") > 0  # errors were stored
    assert f"Bearer {KEY}" in server.log.auth_headers
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 4
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path


def test_killed_during_a_batch_the_rerun_picks_it_up(tmp_path, serve):
    study = make_study(tmp_path / "s", 3)
    server = serve(batch_delay=3.0)
    args = [
        "collect",
        "--study",
        str(study),
        "--backend",
        "openai",
        "--model",
        "gpt-4o-mini",
        "--base-url",
        server.base_url,
        "--batch-api",
    ]
    process = cli(args)
    deadline = time.monotonic() + 60
    while not server.batches:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.02)
    time.sleep(0.2)
    process.kill()
    process.wait()
    with Study.open(study) as handle:
        assert handle.count("outputs") == 0 and handle.meta("collect_batches")
    rerun = cli(args)
    _, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    assert server.log.counts["batches"] == 1 and len(outputs(study)) == 9


@pytest.mark.slow
def test_cli_collects_from_the_embedded_model(tmp_path, capsys):
    study = make_study(tmp_path / "s", 2)
    main(["collect", "--study", str(study), "--max-tokens", "8", "--temperature", "0"])
    assert "6 completed, 0 failed" in capsys.readouterr().out
    with Study.open(study) as handle:
        rows = handle.rows("SELECT * FROM outputs")
    assert len(rows) == 6 and all(r["status"] == "ok" and r["text"] for r in rows)
    assert {(r["backend"], r["model"]) for r in rows} == {("local", "SmolLM2-135M-Instruct")}
    assert all(r["model_reported"].endswith(".gguf") and r["cost_usd"] == 0.0 for r in rows)
    assert all(r["completion_tokens"] <= 8 for r in rows)
    section = read_manifest(study).record()["collect"]["models"]["local"]
    assert section["weights"] == rows[0]["system_fingerprint"]


def test_a_rerun_goes_to_the_recorded_endpoint(study, serve, key, monkeypatch):
    first, other = serve(), serve()
    base = ["collect", "--study", str(study), "--backend", "openai", "--model", "gpt-4o-mini"]
    process = cli([*base, "--base-url", first.base_url, "--samples", "1"])
    assert process.communicate(timeout=120) and process.returncode == 0
    # a rerun asking for more samples without --base-url goes where the study went, and says so
    process = cli([*base, "--samples", "2"])
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert f"endpoint {first.base_url}, as recorded in the study" in out
    assert other.log.chat_bodies == [] and len(first.log.chat_bodies) > 12
    # another server (here through the environment) is refused unless asked for
    monkeypatch.setenv("OPENAI_BASE_URL", other.base_url)
    process = cli([*base, "--samples", "3"])
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2 and "--new-endpoint" in err and "Traceback" not in err
    assert other.log.chat_bodies == []
    process = cli([*base, "--samples", "3", "--new-endpoint"])
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "is new" in out and len(other.log.chat_bodies) > 0
