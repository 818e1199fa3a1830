"""Power of the plan's own equivalence test, by simulation of the per-topic differences.

The normal approximation of the paired TOST understates what the default betting test needs
(about three times the topics), so `harness power` simulates the test the plan names. Each
simulated study draws n topics whose consensus difference d_t is +1, -1 or 0 with the discordant
probabilities (p10, p01) of the analytic model, and runs the equivalence test on them exactly as
`harness analyze` does: betting capital on d_t, one-sample t on d_t, or Tango's score on the
consensus table. The arrays are cut into chunks so memory stays bounded at thousands of topics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

from harness.analysis.statistics.equivalence import betting_capital, default_orders
from harness.analysis.statistics.paired import tango_tost
from harness.errors import HarnessError

CHUNK_CELLS = 4_000_000  # studies x orders x topics per betting chunk (about 32 MB a float array)
MAX_TOPICS = 100_000  # the search gives up beyond this


@dataclass(frozen=True)
class SimulatedPower:
    power: float
    se: float  # Monte Carlo standard error
    reps: int


def draw_differences(
    rng: np.random.Generator, studies: int, n: int, p10: float, p01: float
) -> np.ndarray:
    """(studies, n) consensus differences: +1 with p10, -1 with p01, else 0."""
    u = rng.random((studies, n))
    return np.where(u < p10, 1.0, np.where(u < p10 + p01, -1.0, 0.0))


def _betting(d: np.ndarray, margin: float, alpha: float) -> np.ndarray:
    # p = 1 / capital (averaged over orders) and equivalence needs p < alpha on both sides
    step = max(1, CHUNK_CELLS // (default_orders(d.shape[1]) * d.shape[1]))
    out = np.empty(d.shape[0], dtype=bool)
    for start in range(0, d.shape[0], step):
        part = d[start : start + step]
        with np.errstate(over="ignore"):
            upper = betting_capital(part, margin, alpha) > 1.0 / alpha
            lower = betting_capital(-part, margin, alpha) > 1.0 / alpha
        out[start : start + step] = upper & lower
    return out


def _paired_t(d: np.ndarray, margin: float, alpha: float) -> np.ndarray:
    n = d.shape[1]
    mean, sd = d.mean(axis=1), d.std(axis=1, ddof=1)
    ok = sd > 0  # no variation shows nothing, as in equivalence.paired_t
    se = np.where(ok, sd, 1.0) / math.sqrt(n)
    p_lower = special.stdtr(n - 1, -(mean + margin) / se)
    p_upper = special.stdtr(n - 1, (mean - margin) / se)
    shown: np.ndarray = ok & (p_lower < alpha) & (p_upper < alpha)
    return shown


@lru_cache(maxsize=200_000)
def _tango_rejects(b: int, c: int, n: int, margin: float, alpha: float) -> bool:
    return max(tango_tost(b, c, n, margin)) < alpha


def _tango(d: np.ndarray, margin: float, alpha: float) -> np.ndarray:
    n = d.shape[1]
    b, c = (d > 0).sum(axis=1), (d < 0).sum(axis=1)
    return np.array(
        [_tango_rejects(int(x), int(y), n, margin, alpha) for x, y in zip(b, c, strict=True)],
        dtype=bool,
    )


TESTS: dict[str, Callable[[np.ndarray, float, float], np.ndarray]] = {
    "betting": _betting,
    "paired_t": _paired_t,
    "tango": _tango,
}


def equivalence_rejects(method: str, d: np.ndarray, margin: float, alpha: float) -> np.ndarray:
    """Per study (rows of d): is equivalence within +/-margin shown at alpha?"""
    if method not in TESTS:
        raise HarnessError(f"unknown equivalence method {method!r} (betting, paired_t, tango)")
    return TESTS[method](np.atleast_2d(d), margin, alpha)


def equivalence_power(
    method: str, n: int, p10: float, p01: float, margin: float, alpha: float, reps: int, seed: int
) -> SimulatedPower:
    """Share of `reps` simulated studies of n topics in which the test shows equivalence."""
    if n < 2 or margin <= 0:
        return SimulatedPower(0.0, 0.0, reps)
    d = draw_differences(np.random.default_rng(seed), reps, n, p10, p01)
    hits = float(equivalence_rejects(method, d, margin, alpha).mean())
    return SimulatedPower(hits, math.sqrt(hits * (1.0 - hits) / reps), reps)


def equivalence_topics(
    method: str,
    p10: float,
    p01: float,
    margin: float,
    alpha: float,
    target: float,
    reps: int,
    seed: int,
    start: int,
) -> int | None:
    """Fewest topics whose simulated power reaches `target` (bracketed from `start`, then
    bisected to 2%); None when not reached by MAX_TOPICS. Each n reuses `seed`, so the
    estimates share their random numbers and the search does not wander on noise."""
    if margin <= 0:
        return None

    def reaches(n: int) -> bool:
        return equivalence_power(method, n, p10, p01, margin, alpha, reps, seed).power >= target

    low, high = 1, max(2, start)
    while not reaches(high):
        low, high = high, high * 2
        if high > MAX_TOPICS:
            return None
    while high - low > max(1, high // 50):
        mid = (low + high) // 2
        if reaches(mid):
            high = mid
        else:
            low = mid
    return high
