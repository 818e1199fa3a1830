"""The verdict of many simulated studies with controls, by the components `analyze` uses: the
plan's primary test as its record simulates it (a test without a simulation is refused), exact
accuracy bounds, the corrected difference and its bootstrap, the betting equivalence against the
scaled margin, and the differential-accuracy check.

Only the bookkeeping is vectorised over studies: the bootstrap draws one set of topic weights and
control resamples per study *column* at once (each study still gets its own independent
resamples), and the betting capital runs over all studies in one array.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from harness.analysis.plan.plan_file import Plan
from harness.analysis.plan.primary_tests import primary_test, primary_test_names
from harness.analysis.simulation.known_accuracy import Batch
from harness.analysis.statistics.corrected import MIN_J, inverse_youden
from harness.analysis.statistics.equivalence import betting_capital
from harness.analysis.statistics.weighted import kish
from harness.errors import HarnessError


@dataclass(frozen=True)
class Verdicts:
    supported: np.ndarray  # (studies,) booleans
    refuted: np.ndarray
    gate: np.ndarray  # pooled J's lower bound reached the minimum
    flagged: np.ndarray  # differential check favours the hypothesis
    estimate: np.ndarray  # corrected difference (NaN when J <= MIN_J)
    ci_low: np.ndarray
    ci_high: np.ndarray


def youden_bounds(
    pub_k: np.ndarray, pub_n: np.ndarray, unpub_k: np.ndarray, unpub_n: np.ndarray, level: float
) -> np.ndarray:
    """Vectorised exact (Bonferroni) lower bound of J at two-sided `level`."""
    tail = (1.0 - (1.0 - (1.0 - level) / 2.0)) / 2.0
    with np.errstate(invalid="ignore"):
        s_low = np.where(pub_k > 0, stats.beta.ppf(tail, pub_k, pub_n - pub_k + 1), 0.0)
        p_low = np.where(unpub_k > 0, stats.beta.ppf(tail, unpub_k, unpub_n - unpub_k + 1), 0.0)
    return s_low + p_low - 1.0


def _primary(p: np.ndarray, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """The plan's primary test on every simulated study, as its record simulates it; a test
    whose record has no simulation is refused rather than replaced by another."""
    record = primary_test(plan.primary.test)
    if record.simulate is None:
        supported = [n for n in primary_test_names() if primary_test(n).simulate is not None]
        raise HarnessError(
            f"the simulation of verdicts cannot evaluate the primary test {record.name!r}: "
            f"{record.simulation_note or 'its record has no simulation'}; it simulates "
            + ", ".join(supported)
        )
    return record.simulate(p, plan)


def _bootstrap(
    d: np.ndarray, acc: _Accuracy, resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """95% percentile interval of d/J per study (invalid resamples count as unbounded).

    One draw of topic weights serves every study of the batch (the studies are independent
    simulations, so each still gets a valid bootstrap); control resamples are per study and
    reviewer, collapsed with the reviewers' shares as `analyze` collapses them."""
    studies, n = d.shape
    w = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples) / n  # (B, T)
    mean = w @ d.T  # (B, S)
    size = (resamples, *acc.pub_n.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        sens = rng.binomial(acc.pub_n, acc.pub_k / np.maximum(acc.pub_n, 1), size) / acc.pub_n
        spec = (
            rng.binomial(acc.unpub_n, acc.unpub_k / np.maximum(acc.unpub_n, 1), size) / acc.unpub_n
        )
        youden = np.where(acc.shares > 0, sens + spec - 1.0, 0.0)
    youden = (youden * acc.shares).sum(axis=-1)  # (B, S)
    bad = youden <= MIN_J
    ratio = mean / np.maximum(youden, MIN_J)
    low = np.quantile(np.where(bad, -np.inf, ratio), 0.025, axis=0, method="lower")
    high = np.quantile(np.where(bad, np.inf, ratio), 0.975, axis=0, method="higher")
    return low, high


@dataclass(frozen=True)
class _Accuracy:
    """Control counts (studies, R) and the reviewers' shares (zero without both kinds)."""

    pub_k: np.ndarray
    pub_n: np.ndarray
    unpub_k: np.ndarray
    unpub_n: np.ndarray
    shares: np.ndarray

    @classmethod
    def of(cls, batch: Batch, weighting: str) -> _Accuracy:
        if weighting == "controls" or batch.by_reviewer is None or batch.shares is None:

            def total(x: np.ndarray) -> np.ndarray:
                summed: np.ndarray = x.sum(axis=1, keepdims=True)
                return summed

            return cls(
                total(batch.pub_correct),
                total(batch.pub_n),
                total(batch.unpub_correct),
                total(batch.unpub_n),
                np.ones((batch.p.shape[0], 1)),
            )
        pub_n, pub_k, unpub_n, unpub_k = batch.by_reviewer
        shares = np.where((pub_n > 0) & (unpub_n > 0), batch.shares, 0.0)
        return cls(pub_k, pub_n, unpub_k, unpub_n, shares / shares.sum(axis=1, keepdims=True))

    def weighted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Effective counts (k, n) of both kinds, and the variance of J, per study."""
        sens, n_pub = kish(self.shares, self.pub_k, self.pub_n)
        spec, n_unpub = kish(self.shares, self.unpub_k, self.unpub_n)
        with np.errstate(invalid="ignore", divide="ignore"):
            s, p = self.pub_k / self.pub_n, self.unpub_k / self.unpub_n
            var = np.where(
                self.shares > 0,
                self.shares**2 * (s * (1 - s) / self.pub_n + p * (1 - p) / self.unpub_n),
                0.0,
            ).sum(axis=1)
        return sens * n_pub, n_pub, spec * n_unpub, n_unpub, var


@lru_cache(maxsize=100_000)
def _fisher(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher exact p (cached: simulated tables repeat)."""
    return float(stats.fisher_exact(np.array([[a, b], [c, d]])).pvalue)


def _flagged(batch: Batch, alpha: float) -> np.ndarray:
    out = np.zeros(batch.p.shape[0], dtype=bool)
    for s in range(out.size):
        (pc, ps), (nc, ns) = batch.pub_correct[s].tolist(), batch.pub_n[s].tolist()
        sens = _fisher(pc, nc - pc, ps, ns - ps)
        (uc, us), (mc, ms) = batch.unpub_correct[s].tolist(), batch.unpub_n[s].tolist()
        spec = _fisher(uc, mc - uc, us, ms - us)
        out[s] = (sens < alpha and pc / nc < ps / ns) or (spec < alpha and uc / mc > us / ms)
    return out


def simulate_verdicts(
    batch: Batch,
    plan: Plan,
    rng: np.random.Generator,
    *,
    resamples: int | None = None,
    weighting: str = "shares",
) -> Verdicts:
    """`weighting` "shares" weights reviewers by their share of the real judgments (what
    `analyze` does); "controls" pools control judgments (for comparison)."""
    alpha, sesoi, c = plan.primary.alpha, plan.equivalence.sesoi, plan.controls
    d = batch.d
    acc = _Accuracy.of(batch, weighting)
    pub_k, pub_n, unpub_k, unpub_n, var = acc.weighted()
    greater, less = _primary(batch.p, plan)
    gate = youden_bounds(pub_k, pub_n, unpub_k, unpub_n, c.level) >= c.min_youden
    bound = youden_bounds(pub_k, pub_n, unpub_k, unpub_n, 1.0 - alpha)  # one-sided 1 - a/2
    margin = np.maximum(bound, 0.0) * sesoi
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = betting_capital(d, np.maximum(margin, 1e-9), alpha / 2) >= 2 / alpha
        lower = betting_capital(-d, np.maximum(margin, 1e-9), alpha / 2) >= 2 / alpha
    equivalent = upper & lower & (bound > 0)
    supported = greater < alpha
    refuted = ~supported & gate & ((less < alpha) | equivalent)
    with np.errstate(invalid="ignore", divide="ignore"):
        youden = pub_k / pub_n + unpub_k / unpub_n - 1.0
        estimate = np.where(youden > MIN_J, d.mean(axis=1) * inverse_youden(youden, var)[0], np.nan)
    low, high = _bootstrap(d, acc, resamples or c.bootstrap, rng)
    return Verdicts(supported, refuted, gate, _flagged(batch, alpha), estimate, low, high)
