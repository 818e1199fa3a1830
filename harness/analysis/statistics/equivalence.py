"""Equivalence (two one-sided tests, TOST) and non-superiority against the SESOI.

"No difference" is a claim that needs its own test: the difference is shown to lie inside
(-SESOI, +SESOI) when both one-sided nulls are rejected at alpha, i.e. when the (1 - 2 alpha)
confidence interval lies inside the margin.

`betting` (the default) tests each one-sided null with a betting capital process on the
per-topic differences d_t, which lie in [-1, 1] (Waudby-Smith and Ramdas 2024, JRSS-B 86:1). Under
H0: E d >= m the capital prod(1 + lambda_i (m - d_i)), with lambda_i fixed before d_i is seen, is
a nonnegative supermartingale, so P(capital >= 1/alpha) <= alpha (Ville) for every distribution
on [-1, 1]: its size at the margin is at most alpha at any base rate, where the paired t-test is
liberal when novelty is rare (d_t skewed). The capital is averaged over random orders of the
topics (an average of supermartingales' terminal values still has mean <= 1), so the p-value
depends little on how the topics happen to be listed (a Monte Carlo average over seeded orders:
reproducible, but a relisting can move it by a few tens of percent). The data are not sorted first:
fixed orders of sorted data would no longer be independent draws, and validity would be lost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from harness.analysis.statistics.paired import tango_ci, tango_tost


@dataclass(frozen=True)
class Equivalence:
    method: str
    margin: float
    estimate: float
    p_lower: float  # H0: difference <= -margin
    p_upper: float  # H0: difference >= +margin (its rejection is non-superiority)
    ci_low: float  # (1 - 2 alpha) interval
    ci_high: float
    alpha: float

    @property
    def p_tost(self) -> float:
        return max(self.p_lower, self.p_upper)

    @property
    def equivalent(self) -> bool:
        return self.p_tost < self.alpha

    @property
    def non_superior(self) -> bool:
        return self.p_upper < self.alpha


def paired_t(d: np.ndarray, margin: float, alpha: float) -> Equivalence:
    """TOST with one-sample t-tests of the per-topic differences against -margin and +margin."""
    d = np.asarray(d, dtype=float)
    n = d.size
    mean = float(d.mean()) if n else math.nan
    if n < 2:
        return Equivalence("paired_t", margin, mean, 1.0, 1.0, -math.inf, math.inf, alpha)
    se = float(d.std(ddof=1) / math.sqrt(n))
    df = n - 1
    if se == 0.0:
        # every topic has the same difference: the t statistic is undefined and a p of 0 would
        # claim certainty from no variation at all, so nothing is shown
        return Equivalence("paired_t", margin, mean, 1.0, 1.0, -math.inf, math.inf, alpha)
    p_lower = float(special.stdtr(df, -(mean + margin) / se))
    p_upper = float(special.stdtr(df, (mean - margin) / se))
    half = float(-special.stdtrit(df, alpha) * se)
    return Equivalence("paired_t", margin, mean, p_lower, p_upper, mean - half, mean + half, alpha)


BETTING_ORDERS = 64  # random topic orders averaged over ...
BETTING_CELLS = 100_000  # ... fewer in very large studies (at least 8), about this many cells
BETTING_TRUNCATE = 0.9  # largest bet, as a share of the largest bet that cannot lose everything
BETTING_SEED = 20261202


def default_orders(n: int) -> int:
    """64 orders, fewer for large n, where one order already pins the capital down."""
    return int(min(BETTING_ORDERS, max(8, BETTING_CELLS // max(n, 1))))


def betting_paths(
    d: np.ndarray, alpha: float, *, orders: int | None = None, seed: int = BETTING_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """The ordered observations and untruncated bets, which do not depend on the margin.

    `d` may be (n,) or (studies, n); both outputs are (studies, orders, n). Bets follow the
    predictable plug-in of Waudby-Smith and Ramdas, tuned for a fixed n: lambda_i =
    sqrt(2 log(1/alpha) / (n var_{i-1})), var from the observations before i with a prior 1/4.
    """
    d = np.atleast_2d(np.asarray(d, dtype=float))
    n = d.shape[1]
    orders = orders or default_orders(n)
    order = np.argsort(np.random.default_rng(seed).random((orders, n)), axis=1)
    x = d[:, order]  # (studies, orders, n)
    count = np.arange(1, n + 1, dtype=float)
    mean = np.cumsum(x, axis=2) / (count + 1.0)
    prev_mean = np.concatenate([np.zeros_like(mean[..., :1]), mean[..., :-1]], axis=2)
    var = (0.25 + np.cumsum((x - prev_mean) ** 2, axis=2)) / (count + 1.0)
    prev_var = np.concatenate([np.full_like(var[..., :1], 0.25), var[..., :-1]], axis=2)
    return x, np.sqrt(2.0 * math.log(1.0 / alpha) / (n * prev_var))


def paths_log_capital(x: np.ndarray, bets: np.ndarray, margin: np.ndarray | float) -> np.ndarray:
    """log of the terminal capital against H0: E d >= margin, averaged over orders."""
    m = np.broadcast_to(np.asarray(margin, dtype=float), (x.shape[0],))[:, None, None]
    lam = np.minimum(bets, BETTING_TRUNCATE / (1.0 - m))  # 1 + lam (m - d) stays positive
    logs = np.log1p(lam * (m - x)).sum(axis=2)
    return special.logsumexp(logs, axis=1) - math.log(x.shape[1])


def paths_capital(x: np.ndarray, bets: np.ndarray, margin: np.ndarray | float) -> np.ndarray:
    with np.errstate(over="ignore"):
        result: np.ndarray = np.exp(paths_log_capital(x, bets, margin))
        return result


def betting_capital(
    d: np.ndarray,
    margin: np.ndarray | float,
    alpha: float,
    *,
    orders: int | None = None,
    seed: int = BETTING_SEED,
) -> np.ndarray:
    """Terminal capital against H0: E d >= margin, averaged over random orders of the topics."""
    x, bets = betting_paths(d, alpha, orders=orders, seed=seed)
    return paths_capital(x, bets, margin)


def _p(x: np.ndarray, bets: np.ndarray, margin: float) -> float:
    return float(math.exp(-max(0.0, paths_log_capital(x, bets, margin)[0])))


def betting_p(d: np.ndarray, margin: float, alpha: float) -> float:
    """p-value of H0: E d >= margin (1 / capital, at most 1)."""
    if np.asarray(d).size == 0:
        return 1.0
    return _p(*betting_paths(d, alpha), margin)


def _betting_bound(d: np.ndarray, alpha: float, upper: bool) -> float:
    """Confidence bound: the margin at which the one-sided betting p-value equals alpha."""
    sign = 1.0 if upper else -1.0
    x, bets = betting_paths(sign * d, alpha)

    def excess(m: float) -> float:
        return _p(x, bets, m) - alpha

    top = 1.0 - 1e-9
    if excess(top) > 0:
        return sign * 1.0
    if excess(-1.0) <= 0:
        return -sign * 1.0
    from scipy import optimize  # only the betting interval's ends need it

    return sign * optimize.brentq(excess, -1.0, top, xtol=1e-4)


def betting(d: np.ndarray, margin: float, alpha: float) -> Equivalence:
    """TOST with betting tests of H0: E d >= +margin and H0: E d <= -margin."""
    d = np.asarray(d, dtype=float)
    if d.size == 0:
        return Equivalence("betting", margin, math.nan, 1.0, 1.0, -1.0, 1.0, alpha)
    p_upper = betting_p(d, margin, alpha)
    p_lower = betting_p(-d, margin, alpha)  # H0: E d <= -margin is H0: E(-d) >= margin
    return Equivalence(
        "betting",
        margin,
        float(d.mean()),
        p_lower,
        p_upper,
        _betting_bound(d, alpha, upper=False),
        _betting_bound(d, alpha, upper=True),
        alpha,
    )


def tango(b: int, c: int, n: int, margin: float, alpha: float) -> Equivalence:
    """TOST with Tango's score statistic on the consensus table (Tango 1998)."""
    if n <= 0:  # no complete topic: nothing is shown
        return Equivalence("tango", margin, math.nan, 1.0, 1.0, -1.0, 1.0, alpha)
    p_lower, p_upper = tango_tost(b, c, n, margin)
    low, high = tango_ci(b, c, n, alpha=2 * alpha)
    estimate = (b - c) / n if n else math.nan
    return Equivalence("tango", margin, estimate, p_lower, p_upper, low, high, alpha)


def t_interval(d: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Two-sided t confidence interval for the mean of d."""
    d = np.asarray(d, dtype=float)
    if d.size < 2:
        return (-math.inf, math.inf)
    se = float(d.std(ddof=1) / math.sqrt(d.size))
    half = float(-special.stdtrit(d.size - 1, (1 - level) / 2) * se)
    mean = float(d.mean())
    return (mean - half, mean + half)
