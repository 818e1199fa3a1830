"""Prediction-powered tests and intervals by betting: valid for every distribution of the
per-topic differences, at any number of topics and any base rate of novelty.

The t reference of `ppi.ppi_mean` fails where real studies live: with novelty rare, the per-topic
differences of a dozen adjudicated topics are mostly 0 with a few +-1, and the t-based interval
covered 84% at 50 topics and a base rate of 0.05 (the plain paired t-test on the same topics is as
liberal). Here the tests are betting capital processes (Waudby-Smith and Ramdas 2024, JRSS-B
86:1) on bounded quantities, so their size is at most alpha whatever the distribution. Adjudicated
topics give pairs (d_i, f_i) (adjudicators' and primary reviewers' differences), every topic f.
They are taken in random order; lambda_i (PPI++'s power tuning, clip(cov(d, f) / var f, 0, 0.5),
0 for the first `MIN_FOR_LAMBDA` topics) and each bet use only the topics before i, so each
factor's conditional mean is known under H0.

Two estimands (plan `adjudication.estimand`):

- `study_topics`: theta_N, the mean adjudicated difference over the study's own N
  topics, with the sample as the only randomness (design-based; Waudby-Smith and Ramdas 2020,
  "Confidence sequences for sampling without replacement"). The mean of f over the N topics is
  known, so given the topics before i the next one's f has the known mean
  g_i = (N mean f - sum_{j<i} f_j) / (N - i + 1), and its d the mean
  (N theta - sum_{j<i} d_j) / (N - i + 1). Z_i = d_i - lambda_i (f_i - g_i) has that mean, and
  the capital prod(1 + b_i (c_i(m) - Z_i)), c_i(m) = (N m - sum_{j<i} d_j) / (N - i + 1), is a
  test martingale at theta = m and a supermartingale above it. Sampling without replacement also
  narrows the interval as the sample nears N. The argument assumes a simple random sample taken
  in uniformly random order; the draw is stratified and systematic and the topics are listed by
  id, so for the study's draw the size is measured, not proven (at most 0.0065 one-sided in every
  realistic cell, 0.015 in an adversarial one, against 0.05). It takes the adjudicators' verdicts
  as fixed, so it is used only while at most half the topics are adjudicated
  (`adjudicated.estimand_used`).
- `topic_population` (the default): theta = E[d] over topics like the study's (iid draws from the bank's
  domain pairs in the bank's proportions), which also covers the adjudicators' and the outputs'
  own randomness. mu_f = E[f] is unknown, so each adjudicated topic is paired with its own share
  of the primary-only topics (drawn at random, none used twice): Z_i = d_i - lambda_i (f_i - h_i),
  h_i the mean f of its partners, has mean theta (exactly with iid topics; approximately under a
  proportional stratified draw, where a partner's stratum mix depends on the draw: the
  clustered cells of the benchmark measure it), and the Z_i are independent. That is
  PPI's variance, var(d - lambda f) / n + lambda^2 var(f) / (N - n), with no interval of mu_f to
  pay for. Adjudicated topics left without a partner (more than half the topics adjudicated) keep
  lambda 0. Domain pairs are fixed: generalising to domain pairs outside the bank would need many
  more of them than the bank's six.

Why the capital grows with c (both estimands): a factor g(c) = 1 + b(c) (c - Z) with
b(c) = min(beta, t / (u - c)) and u the largest value Z_i can take has g' = beta >= 0 where
b = beta, and g' = t (u - Z) / (u - c)^2 >= 0 where the truncation binds; the plug-in bets beta
do not depend on m. So confidence bounds are found by bisection over m.

The capital is averaged over random orders of the adjudicated topics (an average of test
martingales' terminal values has mean at most 1), so the result depends little on how the
topics are listed; the orders are seeded. The draw is stratified by domain pair in proportion
(`judge/blinding/gold_draw.py`), which holds the sample's mix of strata fixed where a simple random
sample would let it vary; the simulation benchmark measures the intervals under that draw.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from harness.analysis.statistics.equivalence import BETTING_SEED, BETTING_TRUNCATE, default_orders
from harness.analysis.statistics.ppi import PPIResult

__all__ = ["BettingPPI", "Side", "betting_ppi", "side"]

PRIOR_VAR = 0.25  # prior variance of the bets' plug-in, as in `equivalence.betting_paths`
MIN_FOR_LAMBDA = (
    8  # adjudicated topics seen before lambda leaves 0 (measured: 3 halved the power at 100 topics)
)
MAX_LAMBDA = 0.5  # largest lambda: Z ranges over 1 + 2 lambda, and a wider range caps the bets
BISECTIONS = 30  # bounds to 2 / 2^30 of the range
FIXED_LAMBDA = {"ppi": 1.0, "classical": 0.0}  # ppi++ tunes lambda (predictably)


@dataclass(frozen=True)
class Paths:
    """Per study, order and step (studies, orders, n): Z_i, the plug-in bet, the largest value
    Z_i can take, and c_i(m) = slope * m - offset, the mean of Z_i at theta = m."""

    z: np.ndarray
    bets: np.ndarray
    top: np.ndarray
    slope: np.ndarray | float
    offset: np.ndarray


def paths(
    d: np.ndarray,
    f: np.ndarray,
    f_all: np.ndarray,
    alpha: float,
    orders: int,
    seed: int,
    *,
    fixed: float | None = None,
    population: bool = False,
) -> Paths:
    """`d`, `f`: (studies, n) adjudicated topics; `f_all`: (studies, N) every topic's f, the
    adjudicated ones first. Design-based (the study's topics) unless `population`. `fixed`: one
    lambda for every step (PPI's 1, classical 0) instead of the predictable PPI++ one."""
    n, big_n = d.shape[1], f_all.shape[1]
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((orders, n)), axis=1)
    y, x = d[:, order], f[:, order]
    # the design-based variance of f is a constant of the study's topics; drawn topics are
    # random, so there lambda's scale comes from the adjudicated topics before i
    var_f = None if population else np.var(f_all, axis=1, ddof=1) if big_n > 1 else np.zeros(len(d))
    tuned = fixed is None
    lam = _predictable_lambda(y, x, var_f) if tuned else np.full(y.shape, fixed)
    if population:
        h, paired = _partners(x, f_all[:, n:], rng)
        lam = np.where(paired, lam, 0.0)
        z = y - lam * (x - h)
        return Paths(z, _bets(z, alpha), 1.0 + 2.0 * lam, 1.0, np.zeros_like(z))
    left = big_n - np.arange(n, dtype=float)  # N - i + 1 topics not yet seen at step i
    g = (big_n * f_all.mean(axis=1)[:, None, None] - _before(x)) / left
    z = y - lam * (x - g)
    top = 1.0 + lam * (1.0 + g)
    slope: np.ndarray | float = big_n / left
    offset = _before(y) / left
    return Paths(z, _bets(z, alpha), top, slope, offset)


def _partners(
    x: np.ndarray, rest: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Per order, each adjudicated topic's partners among the primary-only topics (a random
    split, none shared): their mean f, and whether the topic has any."""
    studies, orders, n = x.shape
    m = rest.shape[1] // n  # partners each
    if m == 0:  # fewer primary-only topics than adjudicated ones: one each for the first
        k = rest.shape[1]
        perm = np.argsort(rng.random((orders, k)), axis=1)
        h = np.concatenate([rest[:, perm], np.zeros((studies, orders, n - k))], axis=2)
        return h, np.broadcast_to(np.arange(n) < k, x.shape)
    perm = np.argsort(rng.random((orders, rest.shape[1])), axis=1)[:, : n * m]
    h = rest[:, perm].reshape(studies, orders, n, m).mean(axis=3)
    return h, np.ones(x.shape, dtype=bool)


def _before(v: np.ndarray) -> np.ndarray:
    """Sums over the steps before each step (0 at the first)."""
    shift = [(0, 0)] * (v.ndim - 1) + [(1, 0)]
    return np.pad(np.cumsum(v, axis=-1)[..., :-1], shift)


def _bets(z: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in of Waudby-Smith and Ramdas for a fixed n (as
    `equivalence.betting_paths`): sqrt(2 log(1/alpha) / (n var_{i-1})), var with a prior."""
    n = z.shape[-1]
    count = np.arange(1, n + 1, dtype=float)
    mean = np.cumsum(z, axis=-1) / (count + 1.0)
    prev_mean = np.concatenate([np.zeros_like(mean[..., :1]), mean[..., :-1]], axis=-1)
    var = (PRIOR_VAR + np.cumsum((z - prev_mean) ** 2, axis=-1)) / (count + 1.0)
    prev_var = np.concatenate([np.full_like(var[..., :1], PRIOR_VAR), var[..., :-1]], axis=-1)
    result: np.ndarray = np.sqrt(2.0 * math.log(1.0 / alpha) / (n * prev_var))
    return result


def _predictable_lambda(y: np.ndarray, x: np.ndarray, var_f: np.ndarray | None) -> np.ndarray:
    """lambda_i from the pairs before i only: clip(cov(d, f) / var f, 0, MAX_LAMBDA); var f
    given (a constant) or from the same pairs."""
    k = np.concatenate([[0.0], np.arange(1, y.shape[2], dtype=float)])
    sy, sx, sxy, sxx = (_before(v) for v in (y, x, x * y, x * x))
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = (sxy - sy * sx / np.maximum(k, 1.0)) / np.maximum(k - 1.0, 1.0)
        past = (sxx - sx * sx / np.maximum(k, 1.0)) / np.maximum(k - 1.0, 1.0)
        scale = past if var_f is None else var_f[:, None, None]
        lam = cov / scale
    lam = np.where((k >= MIN_FOR_LAMBDA) & (scale > 0), lam, 0.0)
    result: np.ndarray = np.clip(np.nan_to_num(lam), 0.0, MAX_LAMBDA)
    return result


def ppi_log_capital(p: Paths, m: np.ndarray | float) -> np.ndarray:
    """log capital against H0: theta >= m, averaged over orders; (studies,).

    Each factor is 1 + b (c - Z) with Z <= top; b is the plug-in bet truncated below
    1 / (top - c), so every factor stays above 1 - `BETTING_TRUNCATE`."""
    s = p.z.shape[0]
    m = np.broadcast_to(np.asarray(m, dtype=float), (s,))[:, None, None]
    c = p.slope * m - p.offset
    room = np.maximum(p.top - c, 1e-12)
    b = np.minimum(p.bets, BETTING_TRUNCATE / room)
    logs = np.log1p(b * (c - p.z)).sum(axis=2)
    result: np.ndarray = special.logsumexp(logs, axis=1) - math.log(p.z.shape[1])
    return result


def _bisect(log_capital: Callable[[float | np.ndarray], np.ndarray], target: float) -> np.ndarray:
    """The smallest m in [-1, 1] whose log capital reaches `target` (capital grows with m); 1
    where none does. Vectorised over studies."""
    top = np.asarray(log_capital(1.0 - 1e-9))
    lo, hi = np.full(top.shape, -1.0), np.full(top.shape, 1.0)
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2.0
        reached = np.asarray(log_capital(mid)) >= target
        hi = np.where(reached, mid, hi)
        lo = np.where(reached, lo, mid)
    return np.where(top >= target, hi, 1.0)


@dataclass(frozen=True)
class Side:
    """One direction's tests for many studies at once: H0: sign * theta >= m."""

    paths: Paths

    def p_values(self, m: np.ndarray | float) -> np.ndarray:
        """min(1, 1 / capital) per study."""
        log_k = ppi_log_capital(self.paths, m)
        result: np.ndarray = np.exp(-np.maximum(0.0, log_k))
        return result

    def bound(self, tail: float) -> np.ndarray:
        """The upper confidence bound of sign * theta at one-sided level 1 - tail."""
        target = math.log(1.0 / tail)
        return _bisect(lambda m: ppi_log_capital(self.paths, m), target)


def side(
    sign: float,
    d: np.ndarray,
    f: np.ndarray,
    f_unlabelled: np.ndarray,
    alpha: float,
    *,
    estimator: str = "ppi++",
    estimand: str = "topic_population",
    seed: int = BETTING_SEED,
    orders: int | None = None,
) -> Side:
    """`d`, `f`: (studies, n) adjudicated topics; `f_unlabelled`: (studies, N - n) the others.
    Bets are tuned to `alpha`, the one-sided level the p-values will be read at."""
    d, f, fu = (sign * np.atleast_2d(np.asarray(x, dtype=float)) for x in (d, f, f_unlabelled))
    n, big_n = d.shape[1], fu.shape[1]
    every = np.concatenate([f, fu], axis=1)
    orders = orders or default_orders(n)
    fixed = FIXED_LAMBDA.get(estimator) if big_n else 0.0  # nothing to impute without them
    population = estimand == "topic_population"
    return Side(paths(d, f, every, alpha, orders, seed, fixed=fixed, population=population))


@dataclass(frozen=True)
class BettingPPI(PPIResult):
    """`ppi.PPIResult` (the PPI++ point estimate, its standard error and lambda, reported) whose
    tests and intervals are the betting ones above."""

    alpha: float = 0.05  # the plan's one-sided alpha: the bets of the p-values are tuned to it
    d: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    f: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    f_unlabelled: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    seed: int = BETTING_SEED
    estimand: str = "topic_population"

    def _side(self, sign: float, alpha: float) -> Side:
        data = (self.d[None, :], self.f[None, :], self.f_unlabelled[None, :])
        return side(
            sign, *data, alpha, estimator=self.estimator, estimand=self.estimand, seed=self.seed
        )

    def _p_at_most(self, sign: float, m: float) -> float:
        """p-value of H0: sign * theta >= m."""
        if self.n_labelled == 0:
            return 1.0
        return float(self._side(sign, self.alpha).p_values(m)[0])

    def p_greater(self, null: float = 0.0) -> float:
        """H0: theta <= null against theta > null (H0: -theta >= -null)."""
        return self._p_at_most(-1.0, -null)

    def p_less(self, null: float = 0.0) -> float:
        return self._p_at_most(1.0, null)

    def p_tost(self, margin: float) -> float:
        return max(self.p_greater(-margin), self.p_less(margin))

    def interval(self, level: float) -> tuple[float, float]:
        """Both one-sided bounds at (1 - level) / 2, bets tuned to that tail."""
        if self.n_labelled == 0:
            return (-1.0, 1.0)
        tail = (1.0 - level) / 2.0
        low = -float(self._side(-1.0, tail).bound(tail)[0])
        return (low, float(self._side(1.0, tail).bound(tail)[0]))


def betting_ppi(
    point: PPIResult,
    d: np.ndarray,
    f: np.ndarray,
    f_unlabelled: np.ndarray,
    *,
    alpha: float,
    estimand: str = "topic_population",
    seed: int = BETTING_SEED,
) -> BettingPPI:
    """The betting tests beside `point`, the PPI++ estimate of the same data (`ppi.ppi_mean`)."""
    fields = {k: getattr(point, k) for k in point.__dataclass_fields__}
    return BettingPPI(
        **{**fields, "df": math.inf},
        alpha=alpha,
        d=np.asarray(d, dtype=float),
        f=np.asarray(f, dtype=float),
        f_unlabelled=np.asarray(f_unlabelled, dtype=float),
        seed=seed,
        estimand=estimand,
    )
