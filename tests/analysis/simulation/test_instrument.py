"""The simulated instrument: the tiers' agreement guard, vectorised, against the analysis' own,
and on adjudicators who judge real items by a rule of their own."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.simulation import instrument as I
from harness.analysis.statistics.accuracy import Accuracy
from harness.analysis.statistics.tier_agreement import implied_rate


@pytest.mark.parametrize(
    ("k", "n", "controls"),
    [(12.5, 91, (50, 49, 50, 48)), (40.0, 182, (100, 80, 100, 79)), (3.0, 30, (10, 6, 10, 5))],
)
def test_the_vectorised_implied_rate_is_the_analysis_one(k, n, controls) -> None:
    pub, pub_ok, unpub, unpub_ok = controls
    acc = Accuracy("x", "weighted", "mixed", pub, pub_ok, unpub, unpub_ok, 0.95)
    want = implied_rate(k, n, acc, 0.95)
    as_arrays = tuple(np.array([float(v)]) for v in controls)
    low, high = I._implied(np.array([k]), np.array([float(n)]), as_arrays, 0.95)
    assert (low[0], high[0]) == pytest.approx(want, abs=1e-9)


def test_adjudicators_with_a_rule_of_their_own_do_not_refute_a_true_effect() -> None:
    rng = np.random.default_rng(11)
    own = I.Scenario("own rule", mode="own_rule", own_rate=0.01)
    batch = I.simulate(own, 0.1, 300, rng)
    assert I.tiers_disagree(batch).mean() > 0.9
    decided = I.measured_rule(batch, 0.05, 0.1, 0.3, orders=2)
    assert decided.refuted.mean() <= 0.05
    accurate = I.simulate(I.Scenario("accurate"), 0.1, 300, rng)
    assert not I.tiers_disagree(accurate).any()
