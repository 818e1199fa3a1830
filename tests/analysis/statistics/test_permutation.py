"""The permutation tests (sign flips, within-topic relabelling) against brute-force enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from harness.analysis.statistics.permutation import exact_distribution, relabel_test, sign_flip


def brute_force(d: np.ndarray) -> tuple[float, float, float, float]:
    """Tails over all 2^n sign patterns, enumerated one by one."""
    observed = float(d.sum())
    totals = np.array([np.dot(signs, d) for signs in itertools.product((-1, 1), repeat=d.size)])
    above = np.mean(totals > observed + 1e-9)
    below = np.mean(totals < observed - 1e-9)
    equal = 1 - above - below
    return above + equal, above + equal / 2, below + equal, below + equal / 2


@pytest.mark.parametrize("seed", range(5))
def test_exact_tails_equal_enumeration_on_a_lattice(seed):
    rng = np.random.default_rng(seed)
    # per-topic differences of means of 1-3 reviewers and two single arms: multiples of 1/12
    d = rng.integers(-12, 13, size=12) / 12
    d[rng.random(12) < 0.2] = 0.0
    r = sign_flip(d)
    assert r.method == "exact"
    assert (r.p_greater, r.p_greater_mid, r.p_less, r.p_less_mid) == pytest.approx(
        brute_force(d), abs=1e-12
    )


def test_irregular_values_fall_back_to_monte_carlo():
    d = np.array([math.sqrt(2), -math.pi, math.e, 0.5, -0.1, 1.1, 0.7, -0.3, 0.9, 0.2]) / 7
    r = sign_flip(d, permutations=200_000, seed=3)
    assert r.method.startswith("monte carlo")
    exact = brute_force(d)
    assert r.p_greater == pytest.approx(exact[0], abs=0.005)
    assert r.p_less_mid == pytest.approx(exact[3], abs=0.005)


def test_distribution_is_symmetric_and_sums_to_one():
    k = np.array([1, 1, 2, 3, 3, 3, 6, -2, 0, 5])
    low, pmf = exact_distribution(k)
    assert pmf.sum() == pytest.approx(1.0)
    assert low == -int(np.abs(k).sum())
    assert pmf == pytest.approx(pmf[::-1])


def test_large_study_matches_the_normal_limit():
    rng = np.random.default_rng(0)
    d = rng.integers(-6, 7, size=10_000) / 6
    d = d - d.mean() + 0.004  # a small positive mean
    r = sign_flip(np.round(d * 6) / 6)
    assert r.method == "exact"
    sd = math.sqrt(float(np.sum((np.round(d * 6) / 6) ** 2)))
    z = float(np.sum(np.round(d * 6) / 6)) / sd
    from scipy import stats

    assert r.p_greater_mid == pytest.approx(stats.norm.sf(z), abs=0.01)


def test_all_zero_differences_give_p_one_and_a_half():
    r = sign_flip(np.zeros(20))
    assert r.p_greater == 1.0 and r.p_greater_mid == 0.5 and r.n_nonzero == 0


def test_empty_input():
    r = sign_flip(np.array([]))
    assert r.n == 0 and r.p_greater == 1.0


def _relabel_brute(p: np.ndarray) -> tuple[float, float, float, float]:
    values = p - (p.sum(axis=1, keepdims=True) - p) / 2
    rows = np.arange(len(p))
    totals = np.array(
        [values[rows, list(pick)].sum() for pick in itertools.product(range(3), repeat=len(p))]
    )
    obs = values[:, 2].sum()
    above, below = np.mean(totals > obs + 1e-9), np.mean(totals < obs - 1e-9)
    equal = 1.0 - above - below
    return above + equal, above + equal / 2, below + equal, below + equal / 2


def test_relabel_test_is_exact_against_enumeration():
    rng = np.random.default_rng(3)
    for _ in range(25):
        p = rng.choice([0.0, 1 / 3, 0.5, 2 / 3, 1.0], size=(int(rng.integers(1, 7)), 3))
        r = relabel_test(p)
        assert r.method == "exact"
        got = (r.p_greater, r.p_greater_mid, r.p_less, r.p_less_mid)
        np.testing.assert_allclose(got, _relabel_brute(p), atol=1e-12)


def test_relabel_test_monte_carlo_when_the_lattice_is_too_fine():
    p = np.random.default_rng(4).random((7, 3))
    r = relabel_test(p, permutations=100_000, seed=1)
    assert r.method.startswith("monte carlo")
    assert abs(r.p_greater - _relabel_brute(p)[0]) < 0.01


def test_relabel_test_keeps_its_size_when_novelty_is_rare():
    """A sign flip of d_t = x - (y + z) / 2 assumes symmetry that fails when novelty is rare;
    relabelling exchangeable conditions does not. Null: every cell ~ Binomial(2, 0.04) / 2."""
    rng = np.random.default_rng(11)
    reps, topics = 3000, 50
    greater = less = 0
    for _ in range(reps):
        p = rng.binomial(2, 0.04, size=(topics, 3)) / 2
        r = relabel_test(p)
        greater += r.p_greater_mid < 0.05
        less += r.p_less_mid < 0.05
    assert greater / reps < 0.065 and less / reps < 0.065
