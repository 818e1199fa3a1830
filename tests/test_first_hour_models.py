"""A study's first hour with its models, through the real entry point in child processes: a
mistyped model is taken out before blinding (`collect --remove`: its outputs kept aside and on
record) and the study then blinds; a model name the server does not know costs three requests,
with the server's words on the terminal, and the rest stay pending; `judge --blind`'s refusals
name the models and how to take one out; once blinded, a removal is refused in one line and
nothing changes.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.cli_run import run_subprocess
from tests.plans import primary_only_plan
from tests.servers.model_server import ModelServer
from tests.test_stage_order import refused

KEY = "sk-test-models-Wd3q"
GOOD, TYPO = "openai-compatible/gpt-4o-mini", "openai-compatible/gpt-4o-mnii"
#: 30 assignments: the 12 items of one model at k=2 fit, the 24 of two do not
ROSTER = """reviewers:
  - {id: rev-ada, kind: human, expertise: [Computer Science, Mathematics], capacity: 10}
  - {id: rev-bo, kind: human, expertise: [Neuroscience], capacity: 10}
  - {id: rev-cy, kind: human, expertise: [Physics and Astronomy, Engineering], capacity: 10}
"""


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A study with 4 topics' 12 prompts, a roster and a plan without an adjudicated sample."""
    root = tmp_path_factory.mktemp("models")
    done = run_subprocess("generate", "--study", str(root / "study"), "--limit", "4", "--pilot")
    assert done.returncode == 0, done.stderr
    (root / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    primary_only_plan(root)
    return root


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def study(generated: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(generated / "study", tmp_path / "study"))


def harness(*args: object) -> tuple[int, str, str]:
    done = run_subprocess(*(str(a) for a in args))
    return done.returncode, done.stdout, done.stderr


def blind_args(study: Path, generated: Path) -> list[object]:
    return [
        "judge", "--blind", "--study", study, "--reviewers", generated / "roster.yaml",
        "--k", "2", "--no-extract", "--no-normalise", "--no-bank-controls", "--same-topic",
        "--plan", generated / "plan-primary.yaml",
    ]  # fmt: skip


def collect(study: Path, server: ModelServer, model: str, *more: object) -> tuple[int, str, str]:
    return harness(
        "collect", "--study", study, "--model", model, "--base-url", server.base_url, *more
    )


def test_a_mistyped_model_is_removed_before_blinding_and_the_study_blinds(
    study: Path, generated: Path, env: None
) -> None:
    with ModelServer() as server:  # a server that ignores model names answers both
        for model in (GOOD, TYPO):
            code, out, err = collect(study, server, model)
            assert code == 0, err
    # twice the items: the roster's capacity is short, and the refusal names both models (the
    # items are made before the roster is checked against them)
    code, out, err = harness(*blind_args(study, generated))
    assert code == 2 and err.count("\n") == 1, err
    assert "24 items x k=2 need 48 assignments, the roster offers 30" in err
    assert f"the study holds 2 model(s): {GOOD} (12 ok), {TYPO} (12 ok)" in err
    assert f"`harness collect --study {study} --remove MODEL`" in err

    refused(study, "collect", "--study", study, "--remove", TYPO, "--samples", "2")
    err = refused(study, "collect", "--study", study, "--remove", "openai/gpt-4o-mnii")
    assert f"no such model in this study (it holds: {GOOD}, {TYPO})" in err

    code, out, err = harness("collect", "--study", study, "--remove", TYPO)
    assert code == 0, err
    assert out.startswith(f"removed {TYPO}: 12 ok and 0 failed output(s) kept aside")
    assert "12 unrouted item(s) made of them dropped" in out
    assert f"models left: {GOOD}" in out
    with sqlite3.connect(study / "study.sqlite") as conn:
        kept = conn.execute("SELECT model_key, COUNT(*) FROM outputs GROUP BY 1").fetchall()
        aside = conn.execute(
            "SELECT model_key, COUNT(*), MIN(removed_at) FROM removed_outputs GROUP BY 1"
        ).fetchall()
        models = json.loads(
            conn.execute("SELECT value FROM meta WHERE key = 'collect_models'").fetchone()[0]
        )
    conn.close()
    assert kept == [(GOOD, 12)] and list(models) == [GOOD]
    assert [row[:2] for row in aside] == [(TYPO, 12)]
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    assert list(manifest["collect"]["models"]) == [GOOD]
    (entry,) = manifest["collect"]["removed"]
    assert entry["model_key"] == TYPO and entry["removed_at"] == aside[0][2]
    assert entry["outputs"] == {"ok": 12, "failed": 0} and entry["kept_in"] == "removed_outputs"
    assert entry["record"]["model"] == "gpt-4o-mnii" and entry["record"]["runs"]
    assert [c["params"] for c in manifest["commands"] if c["stage"] == "collect.remove"] == [
        {"model_key": TYPO}
    ]
    code, out, _ = harness("status", "--study", study)
    assert f"removed {TYPO}" in out and "12 ok, 0 failed outputs kept aside" in out

    code, out, err = harness(*blind_args(study, generated))
    assert code == 0, err
    # a later collect run keeps the removal on record
    assert collect(study, server, GOOD, "--new-endpoint")[0] == 0
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    assert [e["model_key"] for e in manifest["collect"]["removed"]] == [TYPO]

    # blinded: refused in one line, and the folder is as it was
    err = refused(study, "collect", "--study", study, "--remove", GOOD)
    assert "blinding cannot be undone" in err and "start a new study" in err


def test_a_model_the_server_does_not_know_stops_after_three_requests(
    study: Path, generated: Path, env: None
) -> None:
    with ModelServer(models={"gpt-4o-mini"}, latency=0.02) as server:
        assert collect(study, server, GOOD, "--concurrency", "8")[0] == 0
        code, out, err = collect(study, server, "openai-compatible/stbu", "--concurrency", "8")
        # three requests, one at a time, not the twelve prompts nor the eight of the concurrency
        assert server.unknown == ["stbu"] * 3
    assert code == 1, err
    assert "openai-compatible/stbu: HTTP 404: The model `stbu` does not exist (first of 3 " in out
    assert "stopped: the server refused 3 requests in a row alike, so the other 9 were not " in out
    assert f"`harness collect --study {study} --remove openai-compatible/stbu`" in out
    # (progress lines come before it on a slow machine)
    assert err.strip().splitlines()[-1] == (
        "error: the run left 3 failed and 9 pending completions (exit 1)"
    )
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    (run,) = manifest["collect"]["models"]["openai-compatible/stbu"]["runs"]
    assert run["stopped"] == "refused" and run["refused"] == 404
    assert run["first_error"] == "HTTP 404: The model `stbu` does not exist"

    err = refused(study, *blind_args(study, generated))
    assert "12 output(s) are still pending (openai-compatible/stbu 12)" in err
    assert f"the study holds 2 model(s): {GOOD} (12 ok), openai-compatible/stbu (0 ok)" in err
    assert f"`harness collect --study {study} --remove MODEL`" in err
    code, out, err = harness("collect", "--study", study, "--remove", "openai-compatible/stbu")
    assert code == 0 and "0 ok and 3 failed output(s) kept aside" in out, err
    code, out, err = harness(*blind_args(study, generated))
    assert code == 0, err


def test_a_resumed_collect_keeps_its_concurrency(tmp_path: Path, env: None) -> None:
    import signal
    import time

    from tests.collection.conftest import cli, count_rows, make_study

    study = make_study(tmp_path / "resume", 20)  # 60 prompts
    with ModelServer(latency=0.1) as server:
        args = ["collect", "--study", str(study), "--model", GOOD, "--base-url", server.base_url]
        first = cli([*args, "--concurrency", "3"], key=KEY)
        deadline = time.monotonic() + 60
        while count_rows(study) < 6:  # Ctrl-C once some completions are stored
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.02)
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=60)
        assert first.returncode == 130, err
        assert server.max_in_flight == 3
        assert count_rows(study) < 60
        server.reset_peak()
        code, out, err = harness("collect", "--study", study)  # no flags: resume as it ran
        assert code == 0, err
        assert server.max_in_flight == 3  # not the default 16
        assert f"note: {GOOD}: kept from its earlier runs: concurrency 3" in out
        code, out, err = harness("collect", "--study", study, "--concurrency", "5")
        assert code == 0, err
        assert f"note: {GOOD}: concurrency 5, not 3 as in its earlier runs" in out
    runs = json.loads((study / "manifest.json").read_text(encoding="utf-8"))["collect"]["models"][
        GOOD
    ]["runs"]
    assert [r["stopped"] for r in runs] == ["interrupted", None, None]
    assert [r["concurrency"] for r in runs] == [3, 3, 5]
    assert [r.get("changed") for r in runs] == [None, None, {"concurrency": [3, 5]}]


def test_the_blinded_steps_name_their_model_and_a_capable_one_is_advised(
    study: Path, generated: Path, env: None
) -> None:
    from harness.judge.blinding.steps_model import capable_model_advice

    with ModelServer() as server:
        code, out, err = collect(study, server, GOOD)
        assert code == 0, err
        assert (
            "--reviewers ROSTER --model PROVIDER/NAME (a capable model for the blinded steps; "
            in out + err
        )
        # the study tests a served model: the embedded one for the steps gets the advice
        advice = capable_model_advice(study, None, steps_on=True)
        assert advice is not None and GOOD in advice and "--model" in advice
        assert capable_model_advice(study, "local", steps_on=True) == advice
        assert capable_model_advice(study, "openai-compatible/big", steps_on=True) is None
        assert capable_model_advice(study, None, steps_on=False) is None
        args = blind_args(study, generated)
        args.remove("--no-extract")
        code, out, err = harness(
            *args, "--model", "openai-compatible/steps-model", "--base-url", server.base_url
        )
    assert code == 0, err
    assert "note: the blinded steps" not in err
    line = next(x for x in out.splitlines() if x.startswith("Blinded steps: "))
    assert re.fullmatch(
        r"Blinded steps: extract by openai/steps-model: \d+ of 12 failed fidelity "
        r"\(no core shown\)",
        line,
    ), line
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["blinded_steps"]["extract"]["fidelity"]["checked"] == 12
    assert capable_model_advice(study, None, steps_on=True) is None  # routed: steps are fixed

    # a plan registered before the blinding is to be registered again, and the next step says so
    from harness.status.next_command import next_step
    from harness.study.manifest import record_section
    from harness.study.manifest_sections import Prereg

    assert next_step(study).startswith("Next: harness prereg")
    record_section(study, "prereg", Prereg(at="2020-01-01T00:00:00Z", plan_sha256="0" * 64))
    assert "(rerun it: the plan was registered at 2020-01-01T00:00:00Z, before the" in next_step(
        study
    )
    code, out, err = harness("prereg", "--study", study, "--plan", generated / "plan-primary.yaml")
    assert code == 0, err
    assert next_step(study).startswith("Next: reviews: ")


def test_removing_a_model_twice_says_it_was_removed_already(
    study: Path, generated: Path, env: None
) -> None:
    with ModelServer() as server:
        for model in (GOOD, TYPO):
            assert collect(study, server, model)[0] == 0
    code, out, err = harness("collect", "--study", study, "--remove", TYPO)
    assert code == 0, err
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    (entry,) = manifest["collect"]["removed"]
    # again, by its provider string and by the bare name it was requested as: nothing changes
    for name in (TYPO, "gpt-4o-mnii"):
        before = (study / "manifest.json").read_bytes()
        code, out, err = harness("collect", "--study", study, "--remove", name)
        assert code == 0, err
        assert out.splitlines()[0] == (
            f"{TYPO} was already removed at {entry['removed_at']} (12 ok and 0 failed output(s) "
            "kept aside in removed_outputs); nothing changed (manifest: collect.removed)"
        )
        assert (study / "manifest.json").read_bytes() == before
    # a model the study never held is still no such model
    err = refused(study, "collect", "--study", study, "--remove", "openai-compatible/other")
    assert f"no such model in this study (it holds: {GOOD})" in err
