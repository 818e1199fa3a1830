"""Planning the adjudicated design (harness.analysis.planning.gold_power): the verdict's own rule
simulated by sample size and primary accuracy, and `harness power --adjudicated`."""

from __future__ import annotations

import json
import math
import re

import pytest

from harness.analysis.plan.plan_file import bundled_plan_path, load_plan
from harness.analysis.planning.design_power import Candidate, assumptions, design_power
from harness.analysis.planning.gold_power import (
    GoldPowerSettings,
    adjudicated_lines,
    adjudicated_power,
    escalated_judgments,
    parse_share_or_count,
    sample_size,
)
from harness.analysis.planning.power_analysis import power
from harness.errors import HarnessError
from tests.cli_run import run_subprocess

PLAN = load_plan(bundled_plan_path()).plan


def test_settings_round_trip_through_their_record():
    settings = GoldPowerSettings(
        topics=120,
        p_single=0.25,
        rho=0.4,
        sesoi=0.08,
        alpha=0.025,
        target=0.9,
        reviewers=3,
        adjudicators=2,
        adjudicator_accuracy=0.9,
        samples=4,
        singles=1,
    )
    record = json.loads(json.dumps(settings.record()))
    assert GoldPowerSettings.from_record(record) == settings
    # the figures name the settings they were computed for
    g = adjudicated_power(settings, PLAN, adjudicated=30, agreements=[0.85], studies=50)
    assert {k: g[k] for k in ("topics", "reviewers", "adjudicators", "samples")} == {
        "topics": 120,
        "reviewers": 3,
        "adjudicators": 2,
        "samples": 4,
    }


def test_share_or_count():
    assert parse_share_or_count("0.25") == 0.25
    assert parse_share_or_count("90") == 90
    assert parse_share_or_count("0") == 0
    for bad in ("1", "1.5", "x", "-0.2"):
        with pytest.raises(ValueError):
            parse_share_or_count(bad)
    assert sample_size(0.25, 363) == 91
    assert sample_size(50, 40) == 40
    assert sample_size(0.001, 100) == 2


def test_power_api_takes_the_plan_sample_by_default():
    result = power(topics=200)
    assert result.adjudicated is not None
    assert result.adjudicated["adjudicated"] == PLAN.adjudication.size(200)
    assert power(topics=200, adjudicated=0).adjudicated is None
    chosen = power(topics=200, adjudicated="60", agreement=0.9).adjudicated
    assert chosen is not None and chosen["adjudicated"] == 60
    assert [a["agreement"] for a in chosen["accuracies"]] == [0.9]
    with pytest.raises(HarnessError, match="--adjudicated"):
        power(topics=200, adjudicated="1.5")


def test_cli_prints_the_adjudicated_table():
    done = run_subprocess("power", "--topics", "120", "--adjudicated", "30", "--agreement", "0.85")
    assert done.returncode == 0, done.stderr
    assert "Adjudicated design: the verdict's own rule simulated" in done.stdout
    assert "accuracy 0.85" in done.stdout
    assert "    30*" in done.stdout
    assert "refuted: n for 80%" in done.stdout
    assert "the 30 adjudicated topics alone" in done.stdout
    bad = run_subprocess("power", "--adjudicated", "abc")
    assert bad.returncode == 2 and "--adjudicated" in bad.stderr


def test_the_plans_majority_and_escalation_are_planned_for(tmp_path):
    """A plan with a majority of three adjudicators who escalate: the simulated rule combines
    by majority, and the section prices the escalation (2 + 2a(1 - a) at a = 0.95)."""
    text = bundled_plan_path().read_text(encoding="utf-8")
    text = re.sub(r"(?m)^(  per_item:) 2 ", r"\1 3 ", text)
    text = re.sub(r"(?m)^(  combine:) mean ", r"\1 majority ", text)
    text = text.replace("  escalate: false", "  escalate: true")
    plan = tmp_path / "plan.yaml"
    plan.write_text(text, encoding="utf-8")
    done = run_subprocess(
        "power", "--plan", str(plan), "--topics", "120", "--adjudicated", "30",
        "--agreement", "0.85",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "3 per item, majority" in done.stdout
    expected = f"about {2 + 2 * 0.95 * 0.05:.2f} adjudicator judgments per item at accuracy 0.95"
    assert expected in done.stdout and "against 3 (the labels of a majority of 3)" in done.stdout


def test_study_file_sets_topics_items_and_the_sample(tmp_path):
    path = tmp_path / "study.yaml"
    path.write_text(
        "subset: 60\nsamples: 2\nmodels:\n  - model: local\n  - model: openai/x\n"
        "    base_url: http://127.0.0.1:9/v1\n",
        encoding="utf-8",
    )
    g = power(study_file=path).adjudicated
    assert g is not None
    assert g["topics"] == 60 and g["adjudicated"] == PLAN.adjudication.size(60)
    # 2 outputs x 2 models: 4 outputs per prompt; 3 x 4 x 2 careful judgments per topic
    assert g["samples"] == 4
    row = next(r for r in g["accuracies"][0]["rows"] if r["adjudicated"] == g["adjudicated"])
    assert row["careful"] == g["adjudicated"] * 3 * 4 * 2 + 2 * g["controls"]


def test_the_verdicts_own_rule_gives_the_sample_it_needs():
    """n for the target: the first simulated sample whose power reaches it, each figure the
    design's own simulation; with `adjudication.differential_error: require` a `supported`
    counts only when robust."""
    settings = GoldPowerSettings(
        topics=120, p_single=0.3, rho=0.3, sesoi=0.3, alpha=0.05, target=0.5, reviewers=2
    )
    g = adjudicated_power(settings, PLAN, adjudicated=60, agreements=[0.9], studies=200)
    m = g["accuracies"][0]
    assert [r["adjudicated"] for r in m["rows"]] == [12, 30, 60, 120]
    first = next((r["adjudicated"] for r in m["rows"] if r["supported"] >= 0.5), None)
    assert first is not None and m["needed"]["supported"] == first
    row = m["rows"][2]
    c = Candidate(120, 0.5, 1)
    assert (row["supported"], row["refuted"]) == design_power(
        settings, c, assumptions(PLAN, 0.9), 200, seed=20261206
    )
    strict_plan = PLAN.model_copy(
        update={
            "adjudication": PLAN.adjudication.model_copy(update={"differential_error": "require"})
        }
    )
    strict = adjudicated_power(
        settings, strict_plan, adjudicated=60, agreements=[0.9], studies=200
    )["accuracies"][0]
    assert all(
        s["supported"] <= r["supported"] for s, r in zip(strict["rows"], m["rows"], strict=True)
    )
    lines = "\n".join(adjudicated_lines(g))
    assert "supported: n for 50%" in lines and "the 60 adjudicated topics alone" in lines
    assert set(m["alone"]) == {"supported", "refuted"}


def test_a_betting_plan_is_simulated_by_its_own_rule():
    """`adjudication.interval: betting` is planned with the betting tests, not the joint rule:
    far less power to refute at the same design."""
    settings = GoldPowerSettings(
        topics=100, p_single=0.3, rho=0.3, sesoi=0.1, alpha=0.05, target=0.8, reviewers=2
    )
    betting = PLAN.model_copy(
        update={"adjudication": PLAN.adjudication.model_copy(update={"interval": "betting"})}
    )
    c = Candidate(100, 1.0, 3, 3, majority=True, escalate=True)
    joint = design_power(settings, c, assumptions(PLAN, 0.9), 200)
    bet = design_power(settings, c, assumptions(betting, 0.9), 200)
    assert bet[1] < joint[1] - 0.3


@pytest.mark.parametrize("k", [3, 5, 7])
@pytest.mark.parametrize("accuracy", [0.6, 0.8, 0.9])
def test_escalated_judgments_by_enumerating_every_vote_sequence(k, accuracy):
    """Read k verdicts in order, a round at a time (k // 2 + 1 first, then what the majority
    still needs): the expected number read, over all 2^k sequences, is the planner's figure;
    for three it is 2 + 2a(1 - a)."""
    import itertools

    majority = k // 2 + 1
    expected = 0.0
    for votes in itertools.product((1, 0), repeat=k):
        p = math.prod(accuracy if v else 1 - accuracy for v in votes)
        read = majority
        while read < k:
            right = sum(votes[:read])
            need = majority - max(right, read - right)
            if need <= 0:
                break
            read += min(need, k - read)
        expected += p * read
    assert escalated_judgments(accuracy, k) == pytest.approx(expected, rel=1e-12)
    if k == 3:
        assert escalated_judgments(accuracy, 3) == pytest.approx(2 + 2 * accuracy * (1 - accuracy))
