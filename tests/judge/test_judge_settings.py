"""The judge stage's settings: built once (checked then), recorded in the manifest as they were
before, rebuilt from that record; the Python API names the blinded steps' model as the CLI does."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.judge.automated.auto_review import calibrate_automated, run_automated
from harness.judge.blinding.blind_stage import blind
from harness.judge.judge_settings import AutoSettings, BlindSettings
from harness.models.settings import ServerOptions
from harness.study.manifest import read_manifest
from tests.judge.calibration_study import controls_study
from tests.judge.conftest import ROSTER, fill_study
from tests.literature.conftest import CORPUS, write_jsonl
from tests.plans import primary_only_plan


def commands(study: Path, stage: str) -> list[dict]:
    return [c["params"] for c in read_manifest(study).record()["commands"] if c["stage"] == stage]


@pytest.fixture
def roster(tmp_path: Path) -> Path:
    path = tmp_path / "roster.yaml"
    path.write_text(ROSTER, encoding="utf-8")
    return path


def test_blind_settings_round_trip_through_the_manifest(tmp_path, roster):
    fill_study(tmp_path / "s", n_topics=2).close()
    plan = primary_only_plan(tmp_path)
    blind(
        tmp_path / "s",
        reviewers=roster,
        seed=4,
        extract=False,
        normalise=False,
        bank_controls=False,
        plan=plan,
        cutoff="2023",
        model="openai/gpt-4o-mini",
        base_url="http://user:secret@127.0.0.1:9/v1?key=1",
        concurrency=3,
    )
    [recorded] = commands(tmp_path / "s", "judge.blind")
    assert recorded == {
        "reviewers": str(roster),
        "k": 2,
        "seed": 4,
        "extract": False,
        "normalise": False,
        "model": "openai/gpt-4o-mini",
        "cutoff": "2023-12-31",
        "backend": "openai",
        "distinct_topics": True,
        "judging": str(Path(__file__).resolve().parents[2] / "judging"),
        "controls": None,
        "bank_controls": False,
        "plan": str(plan),
        "review_what_exists": False,
        "base_url": "http://127.0.0.1:9/v1",  # no credentials, no query
        "concurrency": 3,
    }
    rebuilt = BlindSettings.from_record(recorded)
    assert rebuilt.record() == recorded
    assert rebuilt.server == ServerOptions("http://127.0.0.1:9/v1", 3)


def test_blind_settings_from_record_equal_the_settings_recorded():
    settings = BlindSettings(
        reviewers="r.yaml",
        k=3,
        seed=9,
        normalise=False,
        backend="openai",
        model="vllm/qwen",
        cutoff="2024-06-30",
        distinct_topics=False,
        judging="texts",
        controls="c.yaml",
        plan="p.yaml",
        review_what_exists=True,
        server=ServerOptions("http://127.0.0.1:9/v1", 8),
    )
    assert BlindSettings.from_record(settings.record()) == settings
    assert BlindSettings.from_record(BlindSettings().record()) == BlindSettings()


def test_auto_settings_round_trip_through_the_manifest(tmp_path):
    corpus = f"local:{write_jsonl(tmp_path / 'works.jsonl', [dict(r) for r in CORPUS])}"
    study = controls_study(tmp_path / "s")
    calibrate_automated(study, sources=[corpus], max_queries=2)
    run_automated(study, AutoSettings(sources=(corpus,), max_queries=2))
    study.close()
    [calibration] = commands(tmp_path / "s", "judge --calibrate")
    [auto] = commands(tmp_path / "s", "judge --auto")
    expected = {"sources": [corpus], "cutoff": None, "max_queries": 2, "backend": None}
    assert calibration == expected
    assert {k: v for k, v in auto.items() if k != "reviewers"} == expected
    assert AutoSettings.from_record(calibration).record() == calibration
    assert AutoSettings.from_record(calibration) == AutoSettings(sources=(corpus,), max_queries=2)


def test_the_default_source_is_the_demonstration_corpus():
    assert AutoSettings().sources == AutoSettings.from_options(sources=[]).sources == ("local",)
    assert AutoSettings.from_options(sources="openalex").sources == ("openalex",)
    assert AutoSettings(cutoff="2020").cutoff == "2020-12-31"


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: BlindSettings(cutoff="last year"), "not a date"),
        (lambda: BlindSettings.from_options(base_url="http://127.0.0.1:9/v1"), "openai backend"),
        (lambda: BlindSettings.from_options(model="openai/x", concurrency=0), "at least 1"),
        (lambda: BlindSettings.from_options(backend="pigeon", model="x"), "unknown backend"),
        (lambda: AutoSettings.from_options(sources=["nowhere"]), "unknown literature source"),
        (lambda: AutoSettings(server=ServerOptions(rpm=5.0)), "--rpm does not apply"),
        (lambda: BlindSettings(server=ServerOptions(base_url=("a", "b"))), "one server URL"),
        (lambda: AutoSettings(threshold=math.nan), "finite number"),
        (lambda: AutoSettings(max_queries=0), "--max-queries"),
        (lambda: AutoSettings(backend="carrier-pigeon"), "unknown backend"),
        (lambda: AutoSettings(cutoff="yesterday"), "cut-off"),
    ],
)
def test_settings_are_checked_when_built(build, said):
    with pytest.raises(HarnessError, match=said):
        build()


def test_the_model_is_a_provider_string_or_the_older_pair(capsys):
    new = BlindSettings.from_options(model="openai/gpt-4o-mini")
    assert (new.backend, new.model) == ("openai", "openai/gpt-4o-mini")
    assert capsys.readouterr().err == ""
    old = BlindSettings.from_options(backend="openai", model="gpt-4o-mini")
    assert old == new
    assert capsys.readouterr().err == (
        "note: backend='openai', model='gpt-4o-mini' is deprecated; "
        "write model='openai/gpt-4o-mini'\n"
    )
    for local in ({}, {"model": "local"}, {"backend": "local"}):
        settings = BlindSettings.from_options(**local)
        assert (settings.backend, settings.model) == ("local", None)
    opened = object()
    assert BlindSettings.from_options(backend=opened, model="m").backend is opened


def test_settings_or_keywords_not_both(tmp_path):
    with pytest.raises(TypeError, match="not both"):
        blind(tmp_path / "s", BlindSettings(), k=3)
    with pytest.raises(TypeError, match="expected AutoSettings"):
        run_automated(tmp_path / "s", BlindSettings())  # type: ignore[arg-type]


def test_calibration_refuses_what_only_reviewing_uses(tmp_path):
    study = controls_study(tmp_path / "s")
    with pytest.raises(HarnessError, match="--threshold fixes the threshold"):
        calibrate_automated(study, threshold=0.5)
    with pytest.raises(HarnessError, match="after_unblinding"):
        calibrate_automated(study, AutoSettings(after_unblinding=True))
    assert "commands" not in read_manifest(study.path).record()
    study.close()
