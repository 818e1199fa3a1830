"""The cheapest design that decides (`planning.decisive_design`): no cheaper candidate of the
grid decides at the same simulated studies; too few topics grow until one does; prereg and
`harness power` say what the design can decide before any review."""

from __future__ import annotations

import pytest

from harness.analysis.plan.plan_file import load_plan
from harness.analysis.planning import decisive_design as dd
from harness.analysis.planning.design_power import (
    Assumptions,
    Candidate,
    GoldPowerSettings,
    design_power,
)
from tests.cli_run import run_subprocess

ASSUMED = Assumptions(primary_accuracy=0.85, min_youden=0.3)


@pytest.fixture
def small_grid(monkeypatch):
    """Half the grid, fewer studies: the search's logic, not its resolution."""
    monkeypatch.setattr(dd, "SHARES", (0.25, 1.0))
    monkeypatch.setattr(dd, "CONTROL_FACTORS", (1,))
    monkeypatch.setattr(dd, "PANELS", ((2, False, False),))
    monkeypatch.setattr(dd, "CONFIRM", 400)


def _settings(topics: int) -> GoldPowerSettings:
    return GoldPowerSettings(
        topics=topics, p_single=0.3, rho=0.3, sesoi=0.1, alpha=0.05, target=0.8, reviewers=2
    )


def _decides(s: GoldPowerSettings, c: Candidate) -> bool:
    """The search's own test of one candidate: the screen, then the confirmation."""
    screen = design_power(s, c, ASSUMED, dd.SCREEN, seed=dd.SEED)
    if min(screen) < s.target - dd.SLACK:
        return False
    confirmed = design_power(s, c, ASSUMED, dd.CONFIRM, seed=dd.SEED + 1)
    return min(confirmed) >= s.target + dd.margin(s.target, dd.CONFIRM)


def test_no_cheaper_design_of_the_grid_decides(small_grid):
    s = _settings(363)
    found = dd.decisive_design(s, ASSUMED, confirm=dd.CONFIRM)
    assert found.design is not None and not found.grown
    # the reported power is a third, independent run's: near the target, not the selected one
    assert found.supported > 0.75 and found.refuted > 0.75
    cost = found.design.careful(ASSUMED, s.adjudicator_accuracy)
    cheaper = [
        c
        for c in dd._candidates(363, dd.SHARES)
        if c.careful(ASSUMED, s.adjudicator_accuracy) < cost
    ]
    assert cheaper  # one output per prompt at a quarter adjudicated costs less
    assert not any(_decides(s, c) for c in cheaper)


def test_too_few_topics_grow_until_one_decides(small_grid):
    s = _settings(50)
    found = dd.decisive_design(s, ASSUMED, confirm=dd.CONFIRM)
    assert found.grown and found.design is not None and found.design.topics > 50
    assert found.design.share == 1.0
    assert not any(_decides(s, c) for c in dd._candidates(50, dd.SHARES))
    text = "\n".join(dd.decisive_lines(found, 0.1))
    assert "The 50 topics are too few to decide" in text


def test_escalation_costs_less_than_a_full_majority():
    full = Candidate(100, 1.0, 1, adjudicators=3, majority=True)
    escalated = Candidate(100, 1.0, 1, adjudicators=3, majority=True, escalate=True)
    assert escalated.careful(ASSUMED, 0.95) < full.careful(ASSUMED, 0.95)
    # 300 items: 2 + 2 x 0.95 x 0.05 judgments each; controls planned from the first round:
    # each of 3 adjudicators judges 300 x 2 / 3 items then, 0.4 of which is 80 controls
    assert escalated.controls(ASSUMED) == 80 and full.controls(ASSUMED) == 120
    assert escalated.careful(ASSUMED, 0.95) == round(300 * (2 + 2 * 0.95 * 0.05) + 80 * 3)


def test_prereg_says_a_small_design_cannot_decide(small_grid):
    plan = load_plan(None).plan
    found = dd.study_power(plan, 50, 1)
    assert found.refuted < 0.8
    text = "\n".join(dd.study_power_lines(found, 0.1))
    assert "decides less often than the target power" in text or "cannot refute" in text
    assert "too few to decide" in text


def test_power_cli_prints_the_cheapest_design(small_grid):
    done = run_subprocess("power", "--topics", "363", "--adjudicated", "0.25")
    assert done.returncode == 0, done.stderr
    assert "The cheapest design found that decides" in done.stdout


def test_prereg_md_says_what_the_design_can_decide(small_grid, tmp_path):
    from harness.analysis.planning.preregister import prereg
    from tests.judge.conftest import fill_study

    fill_study(tmp_path / "s", n_topics=12).close()
    text = prereg(tmp_path / "s").text
    section = text.split("## Can this design decide?\n", 1)[1]
    assert "At this study's design (12 topics, 3 adjudicated" in section
    assert "cannot refute" in section
    # the small grid (planned controls only) may find no design within 8 x the topics once a
    # `supported` must be robust to differential error; either way the text says so
    assert "too few to decide" in section or "No design decides" in section


def test_judge_blind_says_whether_the_controls_measure_differential_error():
    from harness.analysis.planning.decisive_design import differential_note

    every = [(e, k) for e in ("published", "not_published") for k in ("cross", "single")]
    assert "a `supported` and a `refuted` must be robust to it" in differential_note(
        "auto", every * 3
    )
    assert "(published cross / single, unpublished cross / single: 3, 3, 3, 3)" in (
        differential_note("require", every * 3)
    )
    assert "says whether it is robust" in differential_note("report", every)
    bank = [e for e in every if e != ("not_published", "single")]
    note = differential_note("auto", bank)
    assert "no unpublished single-field control" in note and "will say that it is not" in note
    assert "neither is possible" in differential_note("require", bank)


def test_controls_that_differ_in_difficulty_cost_power_the_planner_sees():
    """The same design, controls (and real items) whose two calls correlate 0.4: the simulated
    power falls, as the analysis pays the controls' design effect; the plan's key and the CLI
    flag carry the assumption into the search and its words."""
    from dataclasses import replace

    s = _settings(363)
    design = Candidate(363, 0.25, 2, adjudicators=3, majority=True, escalate=True)
    alike = design_power(s, design, ASSUMED, 600)
    differ = design_power(s, design, replace(ASSUMED, control_correlation=0.4), 600)
    assert differ[0] < alike[0] - 0.05 and differ[1] < alike[1] - 0.05
    plan = load_plan(None).plan
    update = {"control_correlation": 0.4}
    plan = plan.model_copy(update={"planning": plan.planning.model_copy(update=update)})
    assert dd.assumptions(plan, 0.8).control_correlation == 0.4


def test_power_cli_takes_the_controls_correlation(small_grid):
    # primaries at 0.95: a cheap design decides, so the search in the child stops early
    done = run_subprocess(
        "power", "--topics", "363", "--adjudicated", "0.25", "--control-correlation", "0.4",
        "--agreement", "0.95",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "one control correlated 0.4 (planning.control_correlation)" in done.stdout
    bad = run_subprocess("power", "--adjudicated", "0.25", "--control-correlation", "1.5")
    assert bad.returncode != 0 and "--control-correlation" in bad.stderr
