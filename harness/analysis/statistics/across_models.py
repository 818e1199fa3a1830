"""The primary comparison across several models: pooled, per model with Holm, and heterogeneity.

The condition of an output is fixed by its prompt, and every model answers the same prompts, so
the unit of relabelling stays the topic: a relabelling moves the condition labels of a topic's
three prompts, for all models at once (labels never move between topics or models). The pooled
test is therefore the primary relabelling test on each topic's proportions averaged over models;
testing each model's topics separately and flipping them independently would ignore that the
models share each prompt's own effect, and be liberal.

Heterogeneity: Cochran's Q and I^2 on the per-model estimates (descriptive: they treat the
models' estimates as independent, which shared topics make them not), and a test of the
model-by-condition interaction that allows for it: Hotelling's T^2 on each topic's contrasts
d_tm - d_tM (m < M), exact F reference under normality of the contrasts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from harness.analysis.statistics.holm import holm_adjust
from harness.analysis.statistics.permutation import SignFlipResult, relabel_test, sign_flip

__all__ = ["AcrossModels", "ModelEffect", "across_models", "differences"]

SINGLE_COLUMNS = {"single_a": 0, "single_b": 1}


@dataclass(frozen=True)
class ModelEffect:
    model: str
    topics: int
    estimate: float  # mean of d_t for this model
    ci_low: float  # t interval at 1 - alpha
    ci_high: float
    p_greater: float  # one-sided primary test (relabelling, mid-p as the plan says)
    p_holm: float  # Holm-adjusted over models
    supported: bool  # p_holm < alpha
    p_less: float = 1.0  # one-sided test the other way (single above cross), unadjusted


@dataclass(frozen=True)
class AcrossModels:
    models: list[ModelEffect]
    pooled: SignFlipResult  # relabelling over topics of the model-averaged proportions
    pooled_p_greater: float
    q: float  # Cochran's Q over the per-model estimates
    q_df: int
    i2: float  # max(0, (Q - df) / Q)
    interaction_f: float | None  # Hotelling T^2 as F; None with one model or too few topics
    interaction_df: tuple[int, int] | None
    interaction_p: float | None
    alpha: float
    differences: np.ndarray | None = None  # (topics, models) d_t behind the estimates

    def summary(self) -> str:
        lines = [
            f"{'model':<28} {'topics':>6} {'difference':>10} {'interval':>19} "
            f"{'p':>8} {'Holm p':>8}"
        ]
        for m in self.models:
            lines.append(
                f"{m.model:<28} {m.topics:>6} {m.estimate:>+10.4f} "
                f"[{m.ci_low:+.3f}, {m.ci_high:+.3f}] {m.p_greater:>8.4f} "
                f"{m.p_holm:>8.4f}"
            )
        lines.append(
            f"pooled over models: {self.pooled.mean:+.4f}, one-sided p "
            f"{self.pooled_p_greater:.4g} ({self.pooled.method})"
        )
        lines.append(f"heterogeneity: Q = {self.q:.3f} on {self.q_df} df, I^2 = {self.i2:.1%}")
        if self.interaction_p is not None and self.interaction_df is not None:
            a, b = self.interaction_df
            lines.append(
                f"model-by-condition interaction: F({a}, {b}) = "
                f"{self.interaction_f:.3f}, p = {self.interaction_p:.4g}"
            )
        return "\n".join(lines)


def differences(p: np.ndarray, single: str) -> np.ndarray:
    """d over the last axis of proportions (single_a, single_b, cross)."""
    other = (
        (p[..., 0] + p[..., 1]) / 2.0
        if single == "mean_of_singles"
        else p[..., SINGLE_COLUMNS[single]]
    )
    d: np.ndarray = p[..., 2] - other
    return d


def _test(p: np.ndarray, single: str, permutations: int, seed: int) -> SignFlipResult:
    if single == "mean_of_singles":
        return relabel_test(p, permutations=permutations, seed=seed)
    return sign_flip(differences(p, single), permutations=permutations, seed=seed)


def _t_interval(d: np.ndarray, alpha: float) -> tuple[float, float]:
    n = d.size
    if n < 2:
        return (math.nan, math.nan)
    half = stats.t.ppf(1 - alpha / 2, n - 1) * d.std(ddof=1) / math.sqrt(n)
    return (float(d.mean() - half), float(d.mean() + half))


def across_models(
    p: np.ndarray,
    models: list[str],
    *,
    single: str = "mean_of_singles",
    alpha: float = 0.05,
    mid_p: bool = True,
    permutations: int = 20_000,
    seed: int = 0,
) -> AcrossModels:
    """`p`: (topics, models, 3) proportions judged novel, topics complete in every model."""
    p = np.asarray(p, dtype=float)
    if p.ndim != 3 or p.shape[1] != len(models) or p.shape[2] != 3:
        raise ValueError("p must be (topics, models, 3) with one column per model")
    d = differences(p, single)  # (T, M)
    tests = [_test(p[:, m], single, permutations, seed) for m in range(len(models))]
    raw = [t.p_greater_mid if mid_p else t.p_greater for t in tests]
    less = [t.p_less_mid if mid_p else t.p_less for t in tests]
    holm = holm_adjust(raw)
    effects = [
        ModelEffect(
            name,
            int(d.shape[0]),
            float(d[:, m].mean()),
            *_t_interval(d[:, m], alpha),
            float(raw[m]),
            float(holm[m]),
            bool(holm[m] < alpha),
            float(less[m]),
        )
        for m, name in enumerate(models)
    ]
    pooled = _test(p.mean(axis=1), single, permutations, seed)
    q, df, i2 = cochran_q(d)
    f, dfs, p_int = interaction_test(d)
    return AcrossModels(
        effects,
        pooled,
        pooled.p_greater_mid if mid_p else pooled.p_greater,
        q,
        df,
        i2,
        f,
        dfs,
        p_int,
        alpha,
        d,
    )


def cochran_q(d: np.ndarray) -> tuple[float, int, float]:
    """Q = sum w_m (est_m - pooled)^2 with w_m = 1 / SE_m^2 (fixed-effect), and I^2."""
    est = d.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = d.shape[0] / d.var(axis=0, ddof=1)
    df = int(d.shape[1] - 1)
    if df < 1 or not np.all(np.isfinite(w)):
        return (math.nan, df, math.nan)
    pooled = float(np.sum(w * est) / np.sum(w))
    q = float(np.sum(w * (est - pooled) ** 2))
    return (q, df, max(0.0, (q - df) / q) if q > 0 else 0.0)


def interaction_test(d: np.ndarray) -> tuple[float | None, tuple[int, int] | None, float | None]:
    """Hotelling's T^2 that every model has the same mean difference (paired over topics)."""
    n, m = d.shape
    k = m - 1
    if k < 1 or n - k < 1:
        return (None, None, None)
    e = d[:, :-1] - d[:, -1:]  # (T, M-1) contrasts
    mean = e.mean(axis=0)
    cov = np.atleast_2d(np.cov(e, rowvar=False))
    if np.linalg.matrix_rank(cov) < k:
        return (None, None, None)
    t2 = float(n * mean @ np.linalg.solve(cov, mean))
    f = t2 * (n - k) / (k * (n - 1))
    return (f, (k, n - k), float(stats.f.sf(f, k, n - k)))
