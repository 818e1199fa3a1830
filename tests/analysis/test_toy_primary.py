"""A primary test added through the registry alone (`plan.primary_tests`) runs end to end.

The toy test lives in this file and is registered for the test only; the study runs through the
public `harness.analyze` (a CLI subprocess would not see a registration made here). Each
assertion reads what a consumer of the registry shows (the plan's allowed values, `run_primary`,
the report's labels, notes, method sentence and power basis, the simulation of verdicts), so a
consumer that keeps its own list of tests fails here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

import harness
from harness.analysis.plan.plan_file import Design, Plan, load_plan
from harness.analysis.plan.primary_tests import (
    PrimaryTestRecord,
    primary_test_names,
    register,
    unregister,
)
from harness.analysis.simulation.known_accuracy import Reviewers, misclassified_batch
from harness.analysis.simulation.verdicts import simulate_verdicts
from harness.analysis.statistics.consensus import Judgments, TopicTable
from harness.analysis.statistics.primary import PrimaryOutcome
from harness.errors import HarnessError
from tests.analysis.helpers import TWO_HUMANS, build_study, random_judgments

NAME = "toy_sign"
METHOD = "a toy sign test of the per-topic differences d_t (binomial, ties dropped)."


def _run(j: Judgments, table: TopicTable, plan: Plan, unsure: str) -> PrimaryOutcome:
    d = table.d
    up, down = int((d > 0).sum()), int((d < 0).sum())
    greater = stats.binomtest(up, up + down, alternative="greater").pvalue if up + down else 1.0
    less = stats.binomtest(up, up + down, alternative="less").pvalue if up + down else 1.0
    mean = float(d.mean())
    return PrimaryOutcome(
        NAME,
        table,
        int(d.size),
        mean,
        mean - 0.5,
        mean + 0.5,
        float(greater),
        float(less),
        p_label="toy sign p",
        details={"positive": up, "negative": down},
        note="; toy note",
    )


TOY = PrimaryTestRecord(
    name=NAME,
    label="Toy sign test of d_t",
    check_label="Toy sign test (check)",
    check_note="toy interval",
    method=lambda plan: METHOD,
    run=_run,
    needs="consensus_table",  # so the power summary must read the record, not the outcome
    simulation_note="the toy test is not simulated",
)


@pytest.fixture
def toy() -> Iterator[PrimaryTestRecord]:
    register(TOY)
    try:
        yield TOY
    finally:
        unregister(NAME)
    assert NAME not in primary_test_names()


def _plan(tmp_path, fast_plan, *, test: str, checks: str):
    text = fast_plan.read_text().replace("test: permutation ", f"test: {test} ", 1)
    text = text.replace("checks: [permutation, mcnemar_exact, mcnemar_midp, gee]", checks, 1)
    assert f"test: {test} " in text and checks in text
    path = tmp_path / f"{test}.yaml"
    path.write_text(text)
    return path


def _study(tmp_path):
    rows = random_judgments(60, p_cross=0.7, p_single=0.2, reviewers=list(TWO_HUMANS), seed=12)
    return build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS)


def test_a_registered_toy_test_is_the_primary_test_end_to_end(tmp_path, fast_plan, toy):
    plan = _plan(tmp_path, fast_plan, test=NAME, checks="checks: [toy_sign, permutation]")
    study = _study(tmp_path)
    result = harness.analyze(study, plan)
    p = result.primary
    assert p.test == NAME and p.description == "Toy sign test of d_t, one-sided"
    up, down = p.details["positive"], p.details["negative"]
    assert p.p_label == "toy sign p" and up + down <= p.n_topics == 60
    sign = stats.binomtest(up, up + down, alternative="greater").pvalue
    assert p.p_value == pytest.approx(sign) and result.verdict.label == "supported"
    primary_row = result.estimates[0]
    assert primary_row.label == "Toy sign test of d_t (primary)"
    assert [e.name for e in result.estimates if e.role == "check"] == ["permutation"]
    assert "consensus differences" in result.power.basis
    data = json.loads((study / "report" / "report.json").read_text())
    assert data["primary"]["test"] == NAME and data["plan"]["primary"]["test"] == NAME
    md = (study / "report" / "report.md").read_text()
    assert METHOD in md and "Toy sign test of d_t, one-sided" in md


def test_a_registered_toy_test_runs_as_a_check(tmp_path, fast_plan, toy):
    checks = "checks: [permutation, toy_sign]"
    plan = _plan(tmp_path, fast_plan, test="permutation", checks=checks)
    result = harness.analyze(_study(tmp_path), plan, write_report=False)
    row = next(e for e in result.estimates if e.name == NAME)
    assert row.role == "check" and row.label == "Toy sign test (check)"
    assert row.note == "toy interval; toy note" and row.p_value < 1e-6


def test_the_default_checks_and_the_allowed_values_follow_the_registry(tmp_path, fast_plan, toy):
    """A registered test is a value the plan accepts; it is a check of plans that name no
    checks only when its record asks (`default_check`), so registering one leaves the bundled
    plan and every existing plan as they were."""
    assert NAME not in Plan(hypothesis="x" * 30).checks
    unregister(NAME)
    register(replace(TOY, default_check=True))
    assert Plan(hypothesis="x" * 30).checks[-1] == NAME
    unregister(NAME)
    plan = _plan(tmp_path, fast_plan, test=NAME, checks="checks: [permutation]")
    with pytest.raises(HarnessError, match="Input should be 'permutation'"):
        load_plan(plan)
    register(TOY)


def test_the_simulation_refuses_a_test_it_cannot_evaluate(tmp_path, fast_plan, toy):
    plan = _plan(tmp_path, fast_plan, test=NAME, checks="checks: [permutation]")
    rng = np.random.default_rng(3)
    batch = misclassified_batch(
        Design(),
        Reviewers(sensitivity=0.9, specificity=0.9),
        studies=2,
        topics=10,
        p_single=0.3,
        effect=0.1,
        controls_per_reviewer=10,
        rng=rng,
    )
    with pytest.raises(HarnessError, match="toy_sign.*not simulated.*simulates permutation"):
        simulate_verdicts(batch, load_plan(plan).plan, rng, resamples=50)
