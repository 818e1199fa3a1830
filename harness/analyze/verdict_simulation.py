"""The verdict of many simulated studies with controls, by the components `analyze` uses: the
primary relabelling test, exact accuracy bounds, the corrected difference and its bootstrap, the
betting equivalence against the scaled margin, and the differential-accuracy check.

Only the bookkeeping is vectorised over studies: the bootstrap draws one set of topic weights and
control resamples per study *column* at once (each study still gets its own independent
resamples), and the betting capital runs over all studies in one array.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from harness.analyze.corrected import MIN_J
from harness.analyze.equivalence import betting_capital
from harness.analyze.permutation import relabel_test
from harness.analyze.plan import Plan
from harness.analyze.simulate_controls import Batch


@dataclass(frozen=True)
class Verdicts:
    supported: np.ndarray        # (studies,) booleans
    refuted: np.ndarray
    gate: np.ndarray             # pooled J's lower bound reached the minimum
    flagged: np.ndarray          # differential check favours the hypothesis
    estimate: np.ndarray         # corrected difference (NaN when J <= MIN_J)
    ci_low: np.ndarray
    ci_high: np.ndarray


def youden_bounds(pub_k: np.ndarray, pub_n: np.ndarray, unpub_k: np.ndarray,
                  unpub_n: np.ndarray, level: float) -> np.ndarray:
    """Vectorised exact (Bonferroni) lower bound of J at two-sided `level`."""
    tail = (1.0 - (1.0 - (1.0 - level) / 2.0)) / 2.0
    with np.errstate(invalid="ignore"):
        s_low = np.where(pub_k > 0, stats.beta.ppf(tail, pub_k, pub_n - pub_k + 1), 0.0)
        p_low = np.where(unpub_k > 0, stats.beta.ppf(tail, unpub_k, unpub_n - unpub_k + 1), 0.0)
    return s_low + p_low - 1.0


def _primary(p: np.ndarray, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    greater, less = np.empty(p.shape[0]), np.empty(p.shape[0])
    for s in range(p.shape[0]):
        r = relabel_test(p[s], permutations=plan.primary.permutations, seed=plan.primary.seed)
        greater[s], less[s] = r.p_greater_mid, r.p_less_mid
    return greater, less


def _bootstrap(d: np.ndarray, pub_k: np.ndarray, pub_n: np.ndarray, unpub_k: np.ndarray,
               unpub_n: np.ndarray, resamples: int, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray]:
    """95% percentile interval of d/J per study (invalid resamples count as unbounded).

    One draw of topic weights serves every study of the batch (the studies are independent
    simulations, so each still gets a valid bootstrap); control resamples are per study."""
    studies, n = d.shape
    w = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples) / n          # (B, T)
    mean = w @ d.T                                                            # (B, S)
    sens = rng.binomial(pub_n, pub_k / pub_n, (resamples, studies)) / pub_n
    spec = rng.binomial(unpub_n, unpub_k / unpub_n, (resamples, studies)) / unpub_n
    youden = sens + spec - 1.0
    bad = youden <= MIN_J
    ratio = mean / np.maximum(youden, MIN_J)
    low = np.quantile(np.where(bad, -np.inf, ratio), 0.025, axis=0, method="lower")
    high = np.quantile(np.where(bad, np.inf, ratio), 0.975, axis=0, method="higher")
    return low, high


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
        out[s] = ((sens < alpha and pc / nc < ps / ns) or (spec < alpha and uc / mc > us / ms))
    return out


def simulate_verdicts(batch: Batch, plan: Plan, rng: np.random.Generator, *,
                      resamples: int | None = None) -> Verdicts:
    alpha, sesoi, c = plan.primary.alpha, plan.equivalence.sesoi, plan.controls
    d = batch.d
    pub_k, pub_n = batch.pub_correct.sum(axis=1), batch.pub_n.sum(axis=1)
    unpub_k, unpub_n = batch.unpub_correct.sum(axis=1), batch.unpub_n.sum(axis=1)
    greater, less = _primary(batch.p, plan)
    gate = youden_bounds(pub_k, pub_n, unpub_k, unpub_n, c.level) >= c.min_youden
    bound = youden_bounds(pub_k, pub_n, unpub_k, unpub_n, 1.0 - alpha)   # one-sided 1 - a/2
    margin = np.maximum(bound, 0.0) * sesoi
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = betting_capital(d, np.maximum(margin, 1e-9), alpha / 2) >= 2 / alpha
        lower = betting_capital(-d, np.maximum(margin, 1e-9), alpha / 2) >= 2 / alpha
    equivalent = upper & lower & (bound > 0)
    supported = greater < alpha
    refuted = ~supported & gate & ((less < alpha) | equivalent)
    youden = pub_k / pub_n + unpub_k / unpub_n - 1.0
    estimate = np.where(youden > MIN_J, d.mean(axis=1) / np.maximum(youden, MIN_J), np.nan)
    low, high = _bootstrap(d, pub_k, pub_n, unpub_k, unpub_n, resamples or c.bootstrap, rng)
    return Verdicts(supported, refuted, gate, _flagged(batch, alpha), estimate, low, high)
