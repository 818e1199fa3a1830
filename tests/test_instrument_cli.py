"""The verdict's instrument through the real entry point, in child processes: people of both
tiers fill their packets (adjudicators' packets carry planted controls), the packets are
imported and `harness analyze` decides. Reviewers who answer by topic alone, and adjudicators
at chance on their controls, do not get `refuted`; adjudicators who answer well reach a verdict.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.analysis.plan.plan_file import bundled_plan_path
from tests.cli_run import run_subprocess
from tests.judge.conftest import fill_study
from tests.judge.fakes import fill_workbook

N_TOPICS = 24
ROSTER = """reviewers:
  - {id: pri-1, kind: human, capacity: 200}
  - {id: pri-2, kind: human, capacity: 200}
  - {id: adj-1, kind: human, role: adjudicator, capacity: 200}
  - {id: adj-2, kind: human, role: adjudicator, capacity: 200}
"""
CUTOFF = "2000-01-01"
Key = dict[str, tuple[str, str]]  # item -> (topic or "control", condition or expected verdict)


def _plan(folder: Path) -> Path:
    """The bundled plan on a small study: 12 topics suffice, 12 of 24 adjudicated, 8 controls
    per reviewer at least, and no reviewer left out for its J: a primary reviewer at chance on
    its controls has an estimate below 0 about every other time (the controls' item ids are
    random), which would leave its items short of two reviewers and the study without a
    verdict, whatever the instrument."""
    text = bundled_plan_path().read_text(encoding="utf-8")
    text = text.replace("min_per_reviewer: 10 ", "min_per_reviewer: 8  ")
    text, kept = re.subn(r"(?m)^(  exclude_reviewer_below:) [-0-9.]+", r"\1 -1.0", text)
    assert kept == 1
    text = re.sub(r"(?m)^(minimum:\n  topics:) \d+", r"\1 12", text)
    text = re.sub(r"(?m)^(adjudication:\n  topics:) [0-9.]+", r"\1 12", text)
    text = "\n".join(line for line in text.splitlines() if "- mixed_glm" not in line) + "\n"
    path = folder / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _controls(folder: Path) -> Path:
    """16 controls, both answers and both forms (cross-field for n % 4 < 2, single-field else),
    so the adjudicators' differential error is measured."""
    entries = "".join(
        f'  - {{statement: "Combines method {n} with material {n} in a new design.", '
        f"expected: {'published' if n % 2 else 'not_published'}, "
        f"kind: {'cross' if n % 4 < 2 else 'single'}, "
        f"evidence: {{title: Work number {n}, year: {1990 if n % 2 else 2010}}}, "
        f'text: "Material {n} could be shaped by method {n}. A trial would compare it."}}\n'
        for n in range(16)
    )
    path = folder / "controls.yaml"
    path.write_text("controls:\n" + entries, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def blinded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("instrument")
    fill_study(root / "study", n_topics=N_TOPICS).close()
    (root / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    plan = _plan(root)
    done = run_subprocess(
        "judge", "--blind", "--study", str(root / "study"), "--reviewers",
        str(root / "roster.yaml"), "--no-extract", "--no-normalise", "--no-bank-controls",
        "--same-topic", "--controls", str(_controls(root)), "--cutoff", CUTOFF, "--plan", str(plan),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "adjudication: 12 of 24 topics drawn" in done.stdout
    prereg = run_subprocess("prereg", "--study", str(root / "study"), "--plan", str(plan))
    assert prereg.returncode == 0, prereg.stderr
    return root


def _key(study: Path) -> Key:
    with sqlite3.connect(study / "study.sqlite") as conn:
        real = conn.execute(
            "SELECT i.item_id, p.topic_id, p.condition FROM items i JOIN outputs o "
            "USING (output_id) JOIN prompts p USING (prompt_id)"
        ).fetchall()
        planted = conn.execute(
            "SELECT i.item_id, 'control', c.expected FROM items i JOIN controls c "
            "USING (control_id)"
        ).fetchall()
        forms = dict(
            conn.execute(
                "SELECT i.item_id, c.kind FROM items i JOIN controls c USING (control_id)"
            ).fetchall()
        )
    FORMS.update(forms)
    return {item: (a, b) for item, a, b in real + planted}


FORMS: dict[str, str] = {}  # control item -> cross | single, filled by `_key`


def _coin(text: str) -> bool:
    return hashlib.sha256(text.encode()).digest()[0] % 2 == 0


def _run(
    blinded: Path, tmp_path: Path, answer: Callable[[str, str, str, str], str], *analyze: str
) -> dict[str, object]:
    """Copy the blinded study, let every reviewer answer(reviewer, item, a, b), import, analyse."""
    study = tmp_path / "study"
    shutil.copytree(blinded / "study", study)
    key = _key(study)
    returned = tmp_path / "returned"
    returned.mkdir()
    for packet in sorted((study / "packets").glob("*/*.xlsx")):
        reviewer = packet.stem

        def verdict(item: str, reviewer: str = reviewer) -> tuple[str, int, str]:
            code = answer(reviewer, item, *key[item])
            return code, 3, "https://doi.org/10.1234/prior" if code == "published" else ""

        fill_workbook(packet, returned / packet.name, verdict)
    files = [str(p) for p in sorted(returned.glob("*.xlsx"))]
    imported = run_subprocess("judge", "--import", "--study", str(study), *files)
    assert imported.returncode == 0, imported.stderr
    done = run_subprocess("analyze", "--study", str(study), *analyze)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads((study / "report" / "report.json").read_text())
    return result


def _truthful_controls(expected: str) -> str:
    return expected  # a control's right answer is its expected verdict


def test_reviewers_who_answer_by_topic_alone_do_not_refute(blinded: Path, tmp_path: Path):
    """Every tier gives each topic one verdict for all its items; on controls, a coin. Every
    adjudicated difference is 0, which the landed rule read as equivalence (REFUTED)."""

    def answer(reviewer: str, item: str, a: str, b: str) -> str:
        if a == "control":
            return "not_published" if _coin(reviewer + item) else "published"
        return "not_published" if _coin(a) else "published"

    result = _run(blinded, tmp_path, answer)
    verdict = result["verdict"]
    assert verdict["label"] == "inconclusive", verdict["reason"]
    assert "never differ within" in verdict["reason"]


def test_adjudicators_at_chance_on_their_controls_do_not_refute(blinded: Path, tmp_path: Path):
    """Real items judged by a coin of their topic and condition (no difference in expectation;
    the same coins on every run, since item ids are random), controls at chance."""

    def answer(reviewer: str, item: str, a: str, b: str) -> str:
        if a == "control":
            if reviewer.startswith("pri"):
                return _truthful_controls(b)
            return "not_published" if _coin(reviewer + item) else "published"
        return "not_published" if _coin(a + b) else "published"

    result = _run(blinded, tmp_path, answer)
    a = result["adjudication"]
    assert not a["adjudicator_gate"]
    assert result["verdict"]["label"] == "inconclusive", result["verdict"]["reason"]
    assert "could not be shown to discriminate" in result["verdict"]["reason"]
    assert a["differential_error"] is None  # a figure of a significant difference only


def test_adjudicators_who_answer_well_reach_a_verdict(blinded: Path, tmp_path: Path):
    """Cross-field items novel, single-field items published, controls right: supported, with
    the adjudicators' accuracy (J = 1) in the report."""

    def answer(reviewer: str, item: str, a: str, b: str) -> str:
        if a == "control":
            return _truthful_controls(b)
        return "not_published" if b == "cross" else "published"

    result = _run(blinded, tmp_path, answer)
    a = result["adjudication"]
    assert a["adjudicator_gate"] and a["youden"] == pytest.approx(1.0)
    assert {row["label"] for row in a["adjudicator_accuracy"]} >= {"adj-1", "adj-2"}
    assert result["verdict"]["label"] == "supported", result["verdict"]["reason"]


def test_adjudicators_whose_errors_favour_cross_field_items_are_not_robust(
    blinded: Path, tmp_path: Path
):
    """Cross-field items novel, single-field published; on their controls the adjudicators call
    every published cross-field control novel. The bundled plan (`auto`, the error measured by
    controls of both forms) makes the difference inconclusive; a plan that only reports keeps it
    `supported` and says it is not robust to their differential error."""

    def answer(reviewer: str, item: str, a: str, b: str) -> str:
        if a == "control":
            wrong = reviewer.startswith("adj") and FORMS[item] == "cross" and b == "published"
            return "not_published" if wrong else b
        return "not_published" if b == "cross" else "published"

    result = _run(blinded, tmp_path / "auto", answer)
    error = result["adjudication"]["differential_error"]
    assert error["published"]["gap"] == pytest.approx(1.0) and not error["robust"]
    strict = result["verdict"]
    assert strict["label"] == "inconclusive"
    assert "adjudication.differential_error: auto" in strict["reason"]
    plan = tmp_path / "report.yaml"
    text = (blinded / "plan.yaml").read_text(encoding="utf-8")
    assert "differential_error: auto" in text
    plan.write_text(text.replace("differential_error: auto", "differential_error: report"), "utf-8")
    verdict = _run(blinded, tmp_path / "report", answer, "--plan", str(plan), "--allow-deviation")[
        "verdict"
    ]
    assert verdict["label"] == "supported"
    assert "NOT robust to it" in verdict["qualifier"]
