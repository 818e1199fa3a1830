"""`judge --base-url/--concurrency`: the blinded steps reach an OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.judge.blinding.blind_stage import blind
from harness.judge.routing.roster import demo_roster_path
from harness.study.manifest import read_manifest
from harness.study.store import Study
from tests.judge.conftest import fill_study
from tests.servers.openai_server import OpenAIServer


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Backends the run opens (the real ones), with no server or key in the environment."""
    import harness.models

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    real, seen = harness.models.open_backend, []

    def spy(*args: Any, **options: Any) -> Any:
        seen.append(real(*args, **options))
        return seen[-1]

    monkeypatch.setattr(harness.models, "open_backend", spy)
    return seen


def test_cli_blind_extracts_on_the_given_server(tmp_path: Path, opened: list[Any]) -> None:
    study = tmp_path / "s"
    fill_study(study, n_topics=2).close()
    with OpenAIServer() as server:
        main(
            [
                "judge",
                "--blind",
                "--study",
                str(study),
                "--reviewers",
                str(demo_roster_path()),
                "--no-normalise",
                "--backend",
                "openai",
                "--model",
                "test-model",
                "--base-url",
                server.base_url,
                "--concurrency",
                "3",
            ]
        )
        requests = server.log.counts["requests"]
    with Study.open(study) as s:
        assert requests == s.count("items") == 6
        # each extracted, checked, and shown (a core that fails its check is kept aside, not shown)
        steps = [json.loads(r[0]) for r in s.rows("SELECT steps FROM items")]
        assert all([e["step"] for e in item] == ["extract"] for item in steps)
        assert all("fidelity" in item[0] for item in steps)
    assert [b.concurrency for b in opened] == [3]
    params = [c for c in read_manifest(study).record()["commands"] if c["stage"] == "judge.blind"][
        -1
    ]
    assert params["params"]["base_url"] == server.base_url
    assert params["params"]["concurrency"] == 3


@pytest.mark.parametrize("options", [{"base_url": "http://127.0.0.1:9/v1"}, {"concurrency": 4}])
def test_server_options_refused_for_the_local_backend(tmp_path: Path, options: dict) -> None:
    fill_study(tmp_path / "s", n_topics=1).close()
    with pytest.raises(HarnessError, match="applies to the openai backend only"):
        blind(tmp_path / "s", reviewers=demo_roster_path(), **options)
    with Study.open(tmp_path / "s") as study:
        assert study.count("items") == 0


def test_concurrency_must_be_positive(tmp_path: Path) -> None:
    fill_study(tmp_path / "s", n_topics=1).close()
    with pytest.raises(HarnessError, match="at least 1"):
        blind(
            tmp_path / "s", reviewers=demo_roster_path(), backend="openai", model="m", concurrency=0
        )


def test_cli_blind_exits_1_when_the_server_fails_the_steps(
    tmp_path: Path, opened: list[Any], capsys: pytest.CaptureFixture
) -> None:
    from tests.cli_run import run_cli

    study = tmp_path / "s"
    fill_study(study, n_topics=2).close()
    with OpenAIServer(api_key="another-key") as server:  # every request: 401
        code, _, err = run_cli(
            capsys,
            "judge",
            "--blind",
            "--study",
            str(study),
            "--reviewers",
            str(demo_roster_path()),
            "--no-normalise",
            "--backend",
            "openai",
            "--model",
            "test-model",
            "--base-url",
            server.base_url,
        )
    assert code == 1, err
    assert "6 blinded step(s) failed; finished work is kept, rerun to retry" in err
    with Study.open(study) as s:
        assert s.count("assignments") == 0
