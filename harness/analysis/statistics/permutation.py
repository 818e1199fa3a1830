"""Topic-level paired sign-flip permutation test of the mean paired difference.

Under the null hypothesis each topic's difference d_t is as likely to have come out with the
opposite sign. The reference distribution of sum(s_t * d_t) over all 2^n sign patterns is computed
exactly: the d_t of a study lie on a lattice (ratios of small counts), so the distribution is a
convolution of scaled binomials, one per distinct |d_t|. A Monte Carlo distribution is used only
when that lattice is too fine or too wide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import stats

#: Largest lattice denominator and support width for the exact distribution.
MAX_DENOMINATOR = 100_000
MAX_SUPPORT = 20_000_000
_TOL = 1e-9


@dataclass(frozen=True)
class SignFlipResult:
    mean: float
    n: int
    n_nonzero: int
    p_greater: float  # P(T* >= T)
    p_greater_mid: float  # P(T* > T) + P(T* = T)/2
    p_less: float
    p_less_mid: float
    method: str  # 'exact' | 'monte carlo (B draws)'


def sign_flip(d: np.ndarray, *, permutations: int = 20000, seed: int = 0) -> SignFlipResult:
    d = np.asarray(d, dtype=float)
    n = int(d.size)
    if n == 0:
        return SignFlipResult(float("nan"), 0, 0, 1.0, 1.0, 1.0, 1.0, "none")
    nonzero = d[np.abs(d) > _TOL]
    lattice = _lattice(nonzero)
    if lattice is not None and int(np.abs(np.rint(nonzero * lattice)).sum()) <= MAX_SUPPORT:
        tails = _exact_tails(np.rint(nonzero * lattice).astype(np.int64))
        method = "exact"
    else:
        tails = _monte_carlo_tails(nonzero, permutations, seed)
        method = f"monte carlo ({permutations} sign patterns)"
    greater, greater_mid, less, less_mid = (min(1.0, max(0.0, t)) for t in tails)
    return SignFlipResult(
        float(d.mean()), n, int(nonzero.size), greater, greater_mid, less, less_mid, method
    )


def _lattice(values: np.ndarray) -> int | None:
    """Smallest L such that every value times L is an integer, or None if too fine."""
    if values.size == 0:
        return 1
    lcm = 1
    for value in np.unique(np.abs(np.round(values, 12))):
        denominator = Fraction(float(value)).limit_denominator(MAX_DENOMINATOR).denominator
        lcm = lcm * denominator // math.gcd(lcm, denominator)
        if lcm > MAX_DENOMINATOR:
            return None
    scaled = values * lcm
    if np.max(np.abs(scaled - np.rint(scaled))) > 1e-6:
        return None
    return lcm


def exact_distribution(k: np.ndarray) -> tuple[int, np.ndarray]:
    """Distribution of sum(s_i * k_i) over equiprobable signs: (lowest value, pmf on step 1)."""
    magnitudes, counts = np.unique(np.abs(k[k != 0]), return_counts=True)
    pmf = np.ones(1)
    low = 0
    for value, count in zip(magnitudes.tolist(), counts.tolist(), strict=True):
        kernel = np.zeros(2 * value * count + 1)
        kernel[:: 2 * value] = stats.binom.pmf(np.arange(count + 1), count, 0.5)
        if pmf.size * kernel.size <= 4_000_000:
            pmf = np.convolve(pmf, kernel)
        else:
            pmf = np.clip(_fft_convolve(pmf, kernel), 0.0, None)
        low -= value * count
    return low, pmf / pmf.sum()


def _exact_tails(k: np.ndarray) -> tuple[float, float, float, float]:
    low, pmf = exact_distribution(k)
    at = int(k.sum()) - low
    above = float(pmf[at + 1 :].sum())
    below = float(pmf[:at].sum())
    equal = float(pmf[at])
    return above + equal, above + equal / 2, below + equal, below + equal / 2


def _monte_carlo_tails(d: np.ndarray, draws: int, seed: int) -> tuple[float, float, float, float]:
    """Tail counts over random sign patterns; the observed pattern counts as one of B + 1."""
    rng = np.random.default_rng(seed)
    observed = float(d.sum())
    tol = 1e-9 * max(1.0, float(np.abs(d).sum()))
    above = equal = below = 0
    chunk = max(1, min(draws, 20_000_000 // max(1, d.size)))
    done = 0
    while done < draws:
        size = min(chunk, draws - done)
        signs = rng.integers(0, 2, size=(size, d.size), dtype=np.int8) * 2 - 1
        totals = signs @ d
        above += int(np.sum(totals > observed + tol))
        below += int(np.sum(totals < observed - tol))
        equal += size - int(np.sum(totals > observed + tol)) - int(np.sum(totals < observed - tol))
        done += size
    total = draws + 1
    equal += 1  # the observed pattern itself
    return (
        (above + equal) / total,
        (above + equal / 2) / total,
        (below + equal) / total,
        (below + equal / 2) / total,
    )


def relabel_test(p: np.ndarray, *, permutations: int = 20000, seed: int = 0) -> SignFlipResult:
    """Within-topic relabelling test of mean(p_cross - (p_single_a + p_single_b) / 2).

    `p` holds each complete topic's three proportions (columns single_a, single_b, cross). Under
    the null hypothesis the three conditions of a topic are exchangeable, so each topic's
    difference is, with probability 1/3 each, the value it takes when cross, single_a or
    single_b is labelled cross. A sign flip would assume that difference is symmetric about 0,
    which it is not when one proportion is compared with the mean of two (skewed when novelty
    is rare); the relabelling distribution needs no such assumption.
    """
    p = np.asarray(p, dtype=float).reshape(-1, 3)
    n = int(p.shape[0])
    if n == 0:
        return SignFlipResult(float("nan"), 0, 0, 1.0, 1.0, 1.0, 1.0, "none")
    total = p.sum(axis=1, keepdims=True)
    # column j: the difference when condition j is labelled cross; observed is column 2 (cross)
    values = p - (total - p) / 2
    observed = values[:, 2]
    moving = ~np.all(np.abs(values - values[:, :1]) <= _TOL, axis=1)
    lattice = _lattice(values[moving].ravel())
    spread = np.ptp(values[moving], axis=1) if moving.any() else np.zeros(0)
    if lattice is not None and float(spread.sum()) * lattice <= MAX_SUPPORT:
        ints = np.rint(values[moving] * lattice).astype(np.int64)
        tails = _relabel_exact_tails(ints, int(np.rint(observed[moving] * lattice).sum()))
        method = "exact"
    else:
        tails = _relabel_monte_carlo_tails(values[moving], permutations, seed)
        method = f"monte carlo ({permutations} relabellings)"
    greater, greater_mid, less, less_mid = (min(1.0, max(0.0, t)) for t in tails)
    return SignFlipResult(
        float(observed.mean()), n, int(moving.sum()), greater, greater_mid, less, less_mid, method
    )


def _relabel_exact_tails(ints: np.ndarray, observed: int) -> tuple[float, float, float, float]:
    """Exact distribution of the sum of one uniformly chosen column per row, by convolution;
    rows with the same values share one power of their three-point kernel."""
    rows, counts = np.unique(np.sort(ints, axis=1), axis=0, return_counts=True)
    pmf, low = np.ones(1), 0
    for row, count in zip(rows, counts.tolist(), strict=True):
        kernel = np.zeros(int(row[-1] - row[0]) + 1)
        np.add.at(kernel, row - row[0], 1.0 / 3.0)
        pmf = _convolve(pmf, _power(kernel, count))
        low += int(row[0]) * count
    at = observed - low
    return (
        float(pmf[at:].sum()),
        float(pmf[at + 1 :].sum() + pmf[at] / 2),
        float(pmf[: at + 1].sum()),
        float(pmf[:at].sum() + pmf[at] / 2),
    )


def _power(kernel: np.ndarray, count: int) -> np.ndarray:
    """The count-fold convolution of a pmf with itself, by repeated squaring."""
    result, base = np.ones(1), kernel
    while count:
        if count & 1:
            result = _convolve(result, base)
        count >>= 1
        if count:
            base = _convolve(base, base)
    return result


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.size * b.size <= 4_000_000:
        return np.convolve(a, b)
    out = np.clip(_fft_convolve(a, b), 0.0, None)
    result: np.ndarray = out / out.sum()
    return result


def _fft_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """scipy's FFT convolution, imported here: only wide lattices reach it, and importing
    scipy.signal (about 0.1 s) would cost every command that loads the plan's tests."""
    from scipy import signal

    result: np.ndarray = signal.fftconvolve(a, b)
    return result


def _relabel_monte_carlo_tails(
    values: np.ndarray, draws: int, seed: int
) -> tuple[float, float, float, float]:
    """Tail counts over random relabellings; the observed labelling counts as one of B + 1."""
    rng = np.random.default_rng(seed)
    observed = float(values[:, 2].sum())
    tol = 1e-9 * max(1.0, float(np.abs(values).sum()))
    above = equal = below = 0
    rows = np.arange(values.shape[0])
    chunk = max(1, min(draws, 20_000_000 // max(1, values.shape[0])))
    done = 0
    while done < draws:
        size = min(chunk, draws - done)
        picks = rng.integers(0, 3, size=(size, values.shape[0]))
        totals = values[rows, picks].sum(axis=1)
        up, down = int(np.sum(totals > observed + tol)), int(np.sum(totals < observed - tol))
        above, below, equal = above + up, below + down, equal + size - up - down
        done += size
    total = draws + 1
    equal += 1
    return (
        (above + equal) / total,
        (above + equal / 2) / total,
        (below + equal) / total,
        (below + equal / 2) / total,
    )
