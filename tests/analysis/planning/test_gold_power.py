"""Planning the adjudicated design (harness.analysis.planning.gold_power) against the
simulation of whole studies, and `harness power --adjudicated`."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from harness.analysis.plan.plan_file import Design, bundled_plan_path, load_plan
from harness.analysis.planning.gold_power import (
    Accuracy,
    GoldPlanner,
    GoldPowerSettings,
    adjudicated_power,
    escalated_judgments,
    measured_lines,
    parse_share_or_count,
    ppi_variance,
    sample_size,
    topic_moments,
)
from harness.analysis.planning.power_analysis import power
from harness.analysis.simulation.gold import (
    Cell,
    GoldStudy,
    latent_correlations,
    new_rule,
    simulate_gold,
)
from harness.analysis.simulation.known_accuracy import Reviewers
from harness.errors import HarnessError
from tests.cli_run import run_subprocess

PLAN = load_plan(bundled_plan_path()).plan


def _planner(topics: int = 363, rho: float = 0.3, reviewers: int = 2) -> GoldPlanner:
    return GoldPlanner(
        GoldPowerSettings(
            topics=topics,
            p_single=0.3,
            rho=rho,
            sesoi=0.1,
            alpha=0.05,
            target=0.8,
            reviewers=reviewers,
        )
    )


def _simulated(accuracy: float, effect: float, topics: int, studies: int, seed: int):
    return simulate_gold(
        GoldStudy(topics),
        Cell("", Reviewers(accuracy, accuracy), Reviewers(accuracy, accuracy)),
        Design(),
        studies=studies,
        p_single=0.3,
        effect=effect,
        rng=np.random.default_rng(seed),
    )


def _moments(accuracy: float, effect: float):
    cross, singles = latent_correlations(Design(), 0.3, effect)
    return topic_moments(
        p_single=0.3,
        effect=effect,
        rho=cross,
        rho_singles=singles,
        primary=Accuracy(accuracy, accuracy),
        reviewers=2,
    )


def test_moments_match_the_simulated_topics():
    m = _moments(0.85, 0.2)
    b = _simulated(0.85, 0.2, 200, 500, seed=1)
    assert m.difference == pytest.approx(0.9 * 0.2)
    assert b.d.var(axis=1, ddof=1).mean() == pytest.approx(m.var_d, rel=0.02)
    assert b.f.var(axis=1, ddof=1).mean() == pytest.approx(m.var_f, rel=0.02)
    cov = np.mean([np.cov(d, f)[0, 1] for d, f in zip(b.d, b.f, strict=True)])
    assert cov == pytest.approx(m.cov, rel=0.03)


def test_independent_items_by_hand():
    # one adjudicated item: var 0.81 x 0.21 + 0.95 x 0.05 / 2; d = cross - mean of singles
    m = topic_moments(p_single=0.3, effect=0.0, rho=0.0, primary=Accuracy(0.7, 0.7), reviewers=2)
    item_d = 0.81 * 0.21 + 0.95 * 0.05 / 2
    item_f = 0.16 * 0.21 + 0.7 * 0.3 / 2
    assert m.var_d == pytest.approx(1.5 * item_d)
    assert m.var_f == pytest.approx(1.5 * item_f)
    assert m.cov == pytest.approx(1.5 * 0.9 * 0.4 * 0.21)


def test_variance_formula_without_clipping():
    m = _moments(0.85, 0.0)
    for n in (25, 91, 200):
        expected = m.var_d / n * (1 - m.rho**2 * (363 - n) / 363)
        assert ppi_variance(m, 363, n) == pytest.approx(expected)


def test_normal_approximation_matches_simulated_power():
    # 363 topics, 91 adjudicated, primary accuracy 0.85: 1,500 studies per figure (MC SE 1.3)
    topics, n, studies = 363, 91, 1500
    for effect, which in ((0.1 / 0.9, "supported"), (0.0, "refuted")):
        m = _moments(0.85, effect)
        planner = _planner()
        planner._moments[(Accuracy(0.85, 0.85), 0.1 if effect else 0.0)] = m
        predicted = planner.power(Accuracy(0.85, 0.85), n)[0 if effect else 1]
        outcome = new_rule(_simulated(0.85, effect, topics, studies, seed=11), n, PLAN)
        simulated = getattr(outcome, which).mean()
        assert simulated == pytest.approx(predicted, abs=0.04), which


def test_power_grows_with_the_sample_and_the_accuracy():
    planner = _planner()
    sizes = np.arange(10, 364)
    for accuracy in (0.6, 0.85, 0.95):
        supported, refuted = planner.power(Accuracy(accuracy, accuracy), sizes)
        assert np.all(np.diff(supported) >= -1e-12)
        # refuted tends to 1 - alpha (it needs `supported` to fail), where the t quantile's
        # approach to the normal one moves it by less than 1e-5
        assert np.all(np.diff(refuted) >= -1e-5)
    for n in (25, 91, 180):
        by_accuracy = [planner.power(Accuracy(a, a), n) for a in (0.5, 0.7, 0.85, 0.95)]
        for verdict in (0, 1):
            values = [p[verdict] for p in by_accuracy]
            assert values == sorted(values)


def test_all_careful_limit_is_the_classical_paired_power():
    planner = _planner()
    classical = planner.classical_power(Accuracy(0.7, 0.7), 363)
    for accuracy in (0.5, 0.7, 0.95):
        assert planner.power(Accuracy(accuracy, accuracy), 363) == pytest.approx(classical)
    m = planner.moments(Accuracy(0.7, 0.7), 0.0)
    assert ppi_variance(m, 363, 363) == pytest.approx(m.var_d / 363)
    # the classical paired test: z = 0.1 / (sd / sqrt(N)) against t's quantile
    se = math.sqrt(planner.moments(Accuracy(0.7, 0.7), 0.1).var_d / 363)
    from scipy import stats

    assert classical[0] == pytest.approx(stats.norm.cdf(0.1 / se - stats.t.isf(0.05, 362)))


def test_needed_is_the_first_sample_reaching_the_target():
    planner = _planner()
    accuracy = Accuracy(0.85, 0.85)
    supported, refuted = planner.needed(accuracy)
    for which, needed in ((0, supported), (1, refuted)):
        n = needed.adjudicated
        assert n is not None and needed.all_careful is not None
        assert planner.power(accuracy, n)[which] >= 0.8 > planner.power(accuracy, n - 1)[which]
        c = needed.all_careful
        assert planner.classical_power(accuracy, c)[which] >= 0.8
        assert planner.classical_power(accuracy, c - 1)[which] < 0.8
        assert n < c and needed.ratio == pytest.approx(n / c)
    # perfect agreement does not make adjudication free, chance agreement saves nothing
    assert planner.needed(Accuracy(0.5, 0.5))[1].ratio == pytest.approx(1.0, abs=0.01)


def test_value_for_money_with_independent_items():
    # the normal-approximation figures 0.92 / 0.75 / 0.5 count equivalence alone; the
    # verdict also refutes when the difference is significantly below zero, which lowers the
    # all-careful topics (249 -> 229 here) and with them the ratio
    ratios = [_planner(rho=0.0).needed(Accuracy(a, a))[1].ratio for a in (0.7, 0.85, 0.95)]
    assert ratios == pytest.approx([0.91, 0.70, 0.45], abs=0.02)


def test_equal_power_saving_and_table():
    g = adjudicated_power(_planner().settings, adjudicated=91, agreements=[0.85])
    assert g["sizes"] == [36, 91, 182, 363]
    at = g["agreements"][0]["at"][1]
    assert at["careful_judgments"] == 91 * 6
    assert 91 < at["all_careful_refuted"] <= 363


def test_settings_round_trip_through_their_record():
    settings = GoldPowerSettings(
        topics=120,
        p_single=0.25,
        rho=0.4,
        sesoi=0.08,
        alpha=0.025,
        target=0.9,
        reviewers=3,
        adjudicators=1,
        adjudicator_accuracy=0.9,
        samples=4,
        singles=1,
    )
    record = json.loads(json.dumps(settings.record()))
    assert GoldPowerSettings.from_record(record) == settings
    assert GoldPowerSettings.from_record(_planner().settings.record()) == _planner().settings
    # the report's figures name the settings they were computed for
    g = adjudicated_power(settings, adjudicated=30, agreements=[0.85])
    assert {k: g[k] for k in ("topics", "reviewers", "adjudicators", "samples")} == {
        "topics": 120,
        "reviewers": 3,
        "adjudicators": 1,
        "samples": 4,
    }
    assert g["per_topic"] == 3 * 4 * 1 and g["scale"] == pytest.approx(0.8)


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
    assert [a["agreement"] for a in chosen["agreements"]] == [0.9]
    with pytest.raises(HarnessError, match="--adjudicated"):
        power(topics=200, adjudicated="1.5")


def test_cli_prints_the_adjudicated_table():
    done = run_subprocess("power", "--topics", "120", "--adjudicated", "30", "--agreement", "0.85")
    assert done.returncode == 0, done.stderr
    assert "Adjudicated design: PPI++" in done.stdout
    assert "accuracy 0.85" in done.stdout
    assert "    30*" in done.stdout
    assert "refuted: careful judgments, PPI / all" in done.stdout
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
    # 3 conditions x 2 outputs x 2 models, 2 adjudicators each
    assert g["samples"] == 4 and g["per_topic"] == 3 * 4 * 2


def test_the_verdicts_own_rule_gives_the_sample_it_needs():
    """n for the target by the simulated rule: the first simulated sample whose power reaches
    it; with `adjudication.differential_error: require` a `supported` counts only when robust."""
    settings = GoldPowerSettings(
        topics=120,
        p_single=0.3,
        rho=0.3,
        sesoi=0.3,
        alpha=0.05,
        target=0.5,
        reviewers=2,
        adjudicators=2,
        adjudicator_accuracy=0.95,
        samples=1,
        singles=2,
    )
    g = adjudicated_power(settings, adjudicated=60, agreements=[0.9], min_youden=0.3)
    m = g["measured"]
    assert [r["adjudicated"] for r in m["rows"]] == [12, 30, 60, 120]
    first = next((r["adjudicated"] for r in m["rows"] if r["supported"] >= 0.5), None)
    assert first is not None and m["needed"]["supported"] == first
    strict = adjudicated_power(
        settings, adjudicated=60, agreements=[0.9], min_youden=0.3, differential="require"
    )["measured"]
    assert all(
        s["supported"] <= r["supported"] for s, r in zip(strict["rows"], m["rows"], strict=True)
    )
    lines = "\n".join(measured_lines(g))
    assert f"supported: n for 50% by the verdict's rule: {first}" in lines
    # the 60 adjudicated topics alone, every one adjudicated: the same careful judgments
    assert set(m["alone"]) == {"supported", "refuted"}
    assert "a study of the 60 adjudicated topics alone" in lines and "+/- about 0.10" in lines


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
