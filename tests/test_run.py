"""`harness run` end to end on a tiny pilot with the real embedded model, then resumed."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from harness.pipeline.runner import run_study
from harness.status.stage_table import study_status
from harness.study import Study
from harness.study.manifest import read_manifest
from tests.cli_run import run_cli


def _unreviewed(s: Study) -> int:
    return s.count(
        "assignments a",
        "NOT EXISTS (SELECT 1 FROM reviews r WHERE r.item_id = a.item_id "
        "AND r.reviewer_id = a.reviewer_id)",
    )


@pytest.mark.slow
def test_run_pilot_end_to_end_from_a_study_file_and_resume(tmp_path, capsys):
    folder = tmp_path / "pilot"
    config = tmp_path / "study.yaml"
    config.write_text(
        "version: 1\npilot: true\nlimit: 3\nmax_tokens: 20\nnormalise: false\n"
        "models:\n  - model: local\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(
        capsys, "run", "--study", str(folder), "--config", str(config), "--max-tokens", "12"
    )
    assert code == 0, err
    assert "NO VERDICT" in out.upper() and "pilot" in out
    assert out.splitlines()[-1].startswith("Done: unblinded")  # the line every stage ends with
    assert [line for line in out.splitlines() if line.startswith("== ")] == [
        "== generate",
        "== collect",
        "== judge --blind",
        "== prereg",
        "== judge --auto",
        "== geometry probe",
        "== analyze",
    ]
    # the blinded steps: the model named on the terminal and in the report, fidelity per condition
    assert re.search(
        r"^Blinded steps: extract by local/SmolLM2-135M-Instruct: \d+ of \d+ failed", out, re.M
    )
    assert "Steps:        written by local/SmolLM2-135M-Instruct" in out
    report = (folder / "report" / "report.md").read_text(encoding="utf-8")
    assert (
        "## The blinded steps" in report and "| extraction (core combination) | cross |" in report
    )
    record = read_manifest(folder).record()["study_file"]
    assert record["sha256"] == hashlib.sha256(config.read_bytes()).hexdigest()
    assert record["overrides"] == {"max_tokens": 12}
    with Study.open(folder) as s:
        assert s.meta("demo") == "1" and s.pilot
        assert s.count("outputs", "status = 'ok'") == 9
        # every assignment reviewed: two primary reviewers per item, the adjudicators on the
        # drawn sample (and, through calibration, on calibration controls not assigned to them)
        assert s.count("items") > 0 and _unreviewed(s) == 0
        reviews = s.count("reviews")
        assigned = s.count("assignments")
        assert reviews >= assigned >= 2 * s.count("items")
    # `harness status` counts what `judge --status` counts: reviews of assignments, extras apart
    (row,) = [r for r in study_status(folder) if r.stage == "reviews"]
    assert row.complete == f"{assigned}/{assigned} (100%)"
    extra = f" ({reviews - assigned} outside the assignments)" if reviews > assigned else ""
    assert row.holds == f"{reviews} reviews{extra}"
    assert f"| Reviews, all (assignments, all) | {reviews} ({assigned}) |" in report
    with Study.open(folder) as s:
        assert s.rows("SELECT COUNT(DISTINCT prompt_id) FROM geometry")[0][0] == 9
        assert json.loads(s.rows("SELECT params FROM outputs LIMIT 1")[0][0])["max_tokens"] == 12
        outputs = s.rows("SELECT output_id, text FROM outputs ORDER BY output_id")

    again = run_study(
        folder, pilot=True, limit=3, max_tokens=12, normalise=False, echo=lambda _: None
    )
    assert again.report_html.exists() and "NO VERDICT" in again.headline.upper()
    with Study.open(folder) as s:  # resumed: nothing collected or reviewed twice
        assert s.rows("SELECT output_id, text FROM outputs ORDER BY output_id") == outputs
        assert s.count("reviews") == reviews and _unreviewed(s) == 0


def test_generate_stage_reports_how_the_topics_were_chosen(tmp_path):
    from harness.generation.generate_stage import generate
    from harness.pipeline.runner import _chosen

    generate(tmp_path / "s", subset=7, subset_seed=2, pilot=True)
    assert _chosen(tmp_path / "s").startswith(" (subset of ")
    assert "6 domain pairs" in _chosen(tmp_path / "s")
    generate(tmp_path / "l", limit=5, pilot=True)
    assert _chosen(tmp_path / "l").startswith(" (the first 5 of ")


def test_the_demo_collects_two_configurations_of_its_local_model(tmp_path):
    import json as _json

    from harness.generation.generate_stage import generate
    from harness.pipeline.runner import DEMO_BATCH_SIZE, _configurations
    from harness.study.tables.collect_models import MODELS_KEY

    generate(tmp_path / "new", limit=2, pilot=True)
    models, args = _configurations(tmp_path / "new", None)
    assert models == ["local#sampled", "local#greedy"]
    assert args == [f"batch_size={DEMO_BATCH_SIZE}", "greedy@temperature=0"]
    assert _configurations(tmp_path / "new", "m.gguf")[0] == [
        "local/m.gguf#sampled",
        "local/m.gguf#greedy",
    ]
    # a study begun before configurations (one model, key `local`) resumes as it began
    generate(tmp_path / "old", limit=2, pilot=True)
    with Study.open(tmp_path / "old") as s:
        s.set_meta(MODELS_KEY, _json.dumps({"local": {"backend": "local", "model": ""}}))
    assert _configurations(tmp_path / "old", None) == (None, [])


def test_run_help_offers_one_configuration(tmp_path):
    from tests.cli_run import run_subprocess

    done = run_subprocess("run", "--help")
    assert done.returncode == 0 and "--one-configuration" in done.stdout
    assert "local#greedy" in done.stdout


def test_a_run_stopped_by_the_unsure_limit_says_how_to_accept_from_a_run(tmp_path):
    from harness.pipeline.runner import accept_hint

    left = "reviewer 'bot' (method: llm:x): ...; rerun with --accept-unsure bot to keep it"
    assert accept_hint(tmp_path, left) == (
        f"{left}; within harness run, accept it with `harness judge --auto --study {tmp_path} "
        "--accept-unsure ID`, then rerun harness run, which resumes"
    )
    assert accept_hint(tmp_path, "2 reviews left") == "2 reviews left"
