"""Simulated power of the plan's equivalence test against brute-force enumeration, and the
bank section of `harness power`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from harness.analysis.planning.equivalence_power import (
    equivalence_power,
    equivalence_rejects,
    equivalence_topics,
)
from harness.analysis.planning.power_analysis import power
from harness.analysis.statistics.sample_size import discordant, sd_binary_difference, tost_power
from harness.errors import HarnessError
from tests.cli_run import run_cli


def _exact_power(method: str, n: int, p10: float, p01: float, margin: float, alpha: float) -> float:
    """Every one of the 3^n sequences of consensus differences, weighted by its probability."""
    seqs = np.array(list(itertools.product([1.0, -1.0, 0.0], repeat=n)))
    prob = np.prod(np.where(seqs == 1, p10, np.where(seqs == -1, p01, 1 - p10 - p01)), axis=1)
    return float(prob[equivalence_rejects(method, seqs, margin, alpha)].sum())


@pytest.mark.parametrize(
    ("method", "margin", "alpha"),
    [("betting", 0.6, 0.2), ("betting", 0.5, 0.3), ("paired_t", 0.5, 0.2), ("tango", 0.3, 0.1)],
)
def test_simulated_power_matches_enumeration(method, margin, alpha):
    n, p10, p01 = 7, 0.1, 0.12
    exact = _exact_power(method, n, p10, p01, margin, alpha)
    assert 0.05 < exact < 0.95  # a case where the test can both pass and fail
    sim = equivalence_power(method, n, p10, p01, margin, alpha, reps=4000, seed=3)
    assert sim.power == pytest.approx(exact, abs=4 * max(sim.se, 0.005))


def test_paired_t_simulation_agrees_with_the_normal_approximation():
    p10, p01 = discordant(0.3, 0.3, 0.3)
    sd = sd_binary_difference(0.3, 0.3, 0.3)
    sim = equivalence_power("paired_t", 252, p10, p01, 0.1, 0.05, reps=2000, seed=1)
    assert sim.power == pytest.approx(tost_power(252, sd, 0.1, 0.0, 0.05), abs=0.04)


def test_topics_needed_reach_the_target_and_fewer_do_not():
    p10, p01 = discordant(0.3, 0.3, 0.3)
    n = equivalence_topics("paired_t", p10, p01, 0.2, 0.05, 0.8, reps=1000, seed=5, start=10)
    assert n is not None
    assert equivalence_power("paired_t", n, p10, p01, 0.2, 0.05, 1000, 5).power >= 0.8
    assert equivalence_power("paired_t", int(n * 0.9), p10, p01, 0.2, 0.05, 1000, 5).power < 0.8
    # the betting test pays for its validity at any base rate with more topics
    betting = equivalence_topics("betting", p10, p01, 0.2, 0.05, 0.8, reps=300, seed=5, start=n)
    assert betting is not None and betting > n


def test_unknown_method_and_empty_margin():
    with pytest.raises(HarnessError, match="unknown equivalence method"):
        equivalence_rejects("wald", np.zeros((2, 5)), 0.1, 0.05)
    assert equivalence_power("betting", 50, 0.1, 0.1, 0.0, 0.05, 10, 1).power == 0.0
    assert equivalence_topics("betting", 0.1, 0.1, 0.0, 0.05, 0.8, 10, 1, 10) is None


def _bank(tmp_path, count: int):
    import yaml

    from harness.materials.bank import load_topic_bank

    topics = [
        t.model_dump(mode="json", exclude_defaults=True) for t in load_topic_bank().topics[:count]
    ]
    path = tmp_path / "bank.yaml"
    path.write_text(yaml.safe_dump({"topics": topics}, sort_keys=False), encoding="utf-8")
    return path


def test_bank_section_uses_the_bank_size_and_the_stated_accuracy(tmp_path):
    bank = _bank(tmp_path, 60)
    # adjudicated=0: no adjudicated section, whose design search the bank's figures do not use
    result = power(bank=bank, bank_reps=50, sensitivity=0.8, specificity=0.95, adjudicated=0)
    b = result.bank
    assert result.inputs["topics"] == b["topics"] == 60
    assert b["method"] == "betting" and b["youden"] == pytest.approx(0.75)
    assert b["refute"]["margin"] == pytest.approx(0.1 * b["youden_bound"])
    # worse reviewers: smaller margin, so refutation needs more topics
    better = power(bank=bank, bank_reps=50, sensitivity=0.95, specificity=0.95, adjudicated=0).bank
    assert better["refute"]["needed"] < b["refute"]["needed"]
    assert b["equivalence"]["needed"] < b["refute"]["needed"]
    assert "On the topic bank (bank.yaml, 60 topics)" in result.summary()


def test_cli_reports_the_bank_and_rejects_bad_accuracy(tmp_path, capsys):
    bank = _bank(tmp_path, 55)
    args = ["--bank-file", str(bank), "--bank-reps", "30", "--adjudicated", "0"]
    code, out, err = run_cli(capsys, "power", *args)
    assert code == 0, err
    assert "Power for 55 topics" in out and "55 topics), equivalence by" in out
    code, out, err = run_cli(capsys, "power", "--sensitivity", "0")
    assert code == 2 and "sensitivity" in err
