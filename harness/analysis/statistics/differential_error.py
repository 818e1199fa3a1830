"""Could the adjudicators' own differential error have made a `supported`?

Errors shared by the adjudicators (and the primary reviewers) that depend on the condition, such
as cross-field outputs that look novel to everyone, shift the adjudicated difference without any
true one. An adjudicator calls a published item of form c (cross-field, single-field) novel with
probability fnr_c and an unpublished one with tpr_c. When cross-field outputs are no more often
truly novel than single-field ones (rates pi_x <= pi_s), the expected adjudicated difference is

    fnr_x - fnr_s + pi_x J_x - pi_s J_s <= (1 - pi_s) g_pub + pi_s g_unpub = b,

(J_c = tpr_c - fnr_c, assumed >= 0 on cross-field items, as every `supported` on their scale
assumes; g_pub = fnr_x - fnr_s, g_unpub = tpr_x - tpr_s), with equality at pi_x = pi_s. So b is
the bias the adjudicators' differential error adds where there is no true difference, and a
`supported` is robust to it when theta exceeds both 0 and b: an intersection-union test (Berger
1982) of theta <= 0 and theta <= b, each at alpha, so that no split of alpha is needed.

The gaps come from the adjudicators' planted controls of both forms, their rates weighted by the
adjudicators' shares of the adjudicated judgments (a majority of k: M(rate), M the chance that
most say novel), with the variance of Agresti and Caffo's smoothed rates (delta method for M).
pi_s is the single-field arm's novel rate on the drawn topics corrected by the single-field
controls, (p_s - fnr_s) / (tpr_s - fnr_s), clipped to [0, 1]; p_s's variance is taken across
topics. b = g_pub + pi_s D (D = g_unpub - g_pub); its variance is the delta method's in the
five estimates it is made of, the single-field controls entering both the gaps and pi_s (their
terms scaled by J_x / J_s). p_s is part of theta too, so the test of theta > b is
(theta - b) / sqrt(se(theta)^2 + var b - 2 cov(theta, b)) against theta's reference, as
`statistics.joint` tests the true difference, with cov(theta, b) = (D / J_s) cov(theta, p_s)
taken across the adjudicated topics. Without an estimate of pi_s (no single-field arm, or
single-field controls that do not discriminate) b is taken at its worst over pi_s in [0, 1]:
theta must exceed both gaps.

The same decomposition corrects the difference itself: pi_x - pi_s = (theta - b_x) / J_s
exactly, with b_x = pi_x g_unpub + (1 - pi_x) g_pub the bias at the cross-field arm's corrected
rate and J_s the single-field controls' J. Its Fieller interval (b_x's variance in the
numerator's with its covariance with theta, J_s's from the single-field controls alone and its
covariance with the numerator) is reported beside the verdict as the
true difference corrected for the error; the verdict's own interval divides theta by the pooled
J, which assumes no such error (in the simulated cells with it, that interval covers the truth
in 5-89% of studies, the corrected one in 92-98%; refuting by the corrected one would make
`refuted` at a true 0 on the whole bank, all adjudicated with 2 outputs per prompt, 74% where
the verdict's rule gives 95%, which is why it is reported beside the verdict, not used by it).

Estimating b, rather than requiring theta above the larger gap, is what gives the guard power:
with pi_s near 0.3 the published gap, the one cross-field outputs that look novel move, carries
0.7 of b and its variance 0.49 of var g_pub. Measured in `benchmarks/bench_instrument.py`
(`require` columns) and `tests/analysis/statistics/test_differential_error.py`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from harness.analysis.statistics.clustered import correlation, design_effect, design_effect_var
from harness.analysis.statistics.joint import (
    fieller,
    majority_rate,
    majority_rho_slope,
    majority_slope,
    smoothed_rate,
    smoothed_var,
)
from harness.analysis.statistics.ppi import PPIResult
from harness.study.records import JsonObject

__all__ = ["ArmRate", "Bias", "Corrected", "DifferentialError", "Gap", "differential_error"]

KINDS = ("published", "not_published")  # false "novel" on published, "novel" on unpublished
FORMS = ("cross", "single")


@dataclass(frozen=True)
class Gap:
    """The scale's cross - single gap in one kind's "novel" rate, estimated on controls."""

    value: float
    variance: float


@dataclass(frozen=True)
class ArmRate:
    """An adjudicated arm (single-field or cross-field) on the drawn topics: the mean of its
    per-topic novel rates on the adjudicated scale, that mean's variance across topics and its
    covariance with the difference's estimate (the arm is part of it)."""

    rate: float
    variance: float
    covariance: float = 0.0

    @classmethod
    def of(cls, rates: np.ndarray, rectifier: np.ndarray) -> ArmRate:
        """From the arm's per-topic rates and the difference's per-topic rectifier d - lambda f
        on the same adjudicated topics (the primary-only topics' part of the estimate does not
        covary with the arm)."""
        n = rates.size
        cov = float(np.cov(rates, rectifier, ddof=1)[0, 1] / n)
        return cls(float(rates.mean()), float(rates.var(ddof=1) / n), cov)


@dataclass(frozen=True)
class Bias:
    """b = (1 - pi_s) g_pub + pi_s g_unpub with its variance and its covariance with the
    difference's estimate; `rate`: the true novel rate of the arm it is taken at (pi_s for the
    test; None: b at its worst, the larger gap)."""

    value: float
    variance: float
    rate: float | None
    covariance: float = 0.0


@dataclass(frozen=True)
class Corrected:
    """The true difference corrected for the adjudicators' differential error, with Fieller's
    interval at `level` (two-sided)."""

    estimate: float
    low: float
    high: float
    level: float


@dataclass(frozen=True)
class _Rate:
    """One (kind, form) "novel" rate on the adjudicated scale, with its delta-method variance;
    on a majority's scale also its slope in the correlation of calls on one control, which
    both forms of a kind share, and that correlation's estimated variance (they enter the
    gaps as the two forms' difference in slope: a common error in rho nearly cancels)."""

    value: float
    variance: float
    rho_slope: float = 0.0
    rho_var: float = 0.0

    def rho_term(self, other: _Rate, weight: float = 1.0, scale: float = 1.0) -> float:
        """The variance a difference weight x (scale x self - other) of two rates of one kind
        takes from their shared correlation's estimate (`scale`: the own form's rates enter
        the bias through pi too, J_other / J_own)."""
        return (weight * (scale * self.rho_slope - other.rho_slope)) ** 2 * self.rho_var


@dataclass(frozen=True)
class DifferentialError:
    """The difference against the bias its adjudicators' controls estimate."""

    ppi: PPIResult
    published_gap: Gap | None  # None: a weighted adjudicator lacks controls of a form
    unpublished_gap: Gap | None
    published: tuple[int, int]  # counted control judgments (cross, single)
    unpublished: tuple[int, int]
    alpha: float
    bias: Bias | None = None
    corrected: Corrected | None = None  # None: the error or the cross-field arm unmeasured

    def p_above(self, gap: Gap | Bias) -> float:
        """One-sided p of H0: theta <= the gap, with both estimates' uncertainty."""
        se = max(_var_less(self.ppi.se, gap), 0.0) ** 0.5
        if not se > 0:
            return 0.0 if self.ppi.estimate > gap.value else 1.0
        return 1.0 - self.ppi._cdf((self.ppi.estimate - gap.value) / se)

    @property
    def p_value(self) -> float | None:
        """The intersection-union test's p: the larger of theta's and theta - b's (None: a gap
        unmeasured)."""
        if self.bias is None or self.published_gap is None or self.unpublished_gap is None:
            return None
        return max(self.ppi.p_greater(), self.bias_p())

    def bias_p(self) -> float:
        """p of H0: theta <= b (b at its worst: the larger p over the two gaps)."""
        assert self.bias is not None
        if self.bias.rate is None and self.published_gap and self.unpublished_gap:
            return max(self.p_above(self.published_gap), self.p_above(self.unpublished_gap))
        return self.p_above(self.bias)

    @property
    def measured(self) -> bool:
        """Do the controls measure the error (every weighted adjudicator with controls of both
        forms, published and unpublished)? A matter of design: which controls were planted."""
        return self.published_gap is not None and self.unpublished_gap is not None

    @property
    def robust(self) -> bool:
        p = self.p_value
        return p is not None and p < self.alpha

    def text(self) -> str:
        counts = (
            f"cross / single controls: {_pair(self.published)} published, "
            f"{_pair(self.unpublished)} unpublished"
        )
        what = (
            "the adjudicators' differential error (cross-field items called novel more often "
            "whatever their truth)"
        )
        if self.bias is None or self.published_gap is None or self.unpublished_gap is None:
            return f"{what} is not measured by their controls ({counts})"
        b = self.bias
        weight = (
            f"weighted by the single-field arm's corrected novel rate {b.rate:.3f}"
            if b.rate is not None
            else "at its worst, the difference above both (the single-field arm's novel rate "
            "not estimable)"
        )
        verdict = "robust to it" if self.robust else "NOT robust to it"
        c = self.corrected
        fixed = (
            ""
            if c is None
            else f"; corrected for it, the true difference is {c.estimate:+.3f} ({c.level:.0%} "
            f"interval [{c.low:+.3f}, {c.high:+.3f}])"
        )
        return (
            f"{what}, estimated from the cross - single gaps in their novel calls, "
            f"{_gap_text(self.published_gap)} on published and {_gap_text(self.unpublished_gap)} on "
            f"unpublished controls, {weight}: a bias of {_gap_text(b)} (p = {self.bias_p():.3g} "
            f"that the difference does not exceed it); the difference exceeds 0 and the bias at "
            f"one-sided alpha = {self.alpha:g} (intersection-union, {counts}): {verdict}{fixed}"
        )

    def record(self) -> JsonObject:
        def part(g: Gap | Bias | None) -> JsonObject | None:
            return (
                None if g is None else {"gap": g.value, "se": g.variance**0.5, "p": self.p_above(g)}
            )

        bias = part(self.bias)
        if bias is not None and self.bias is not None:
            bias["single_rate"] = self.bias.rate
            bias["p"] = self.bias_p()
        c = self.corrected
        return {
            "corrected": None if c is None else asdict(c),
            "published": part(self.published_gap),
            "unpublished": part(self.unpublished_gap),
            "bias": bias,
            "p_value": self.p_value,
            "robust": self.robust,
            "published_counts": list(self.published),
            "unpublished_counts": list(self.unpublished),
            "alpha": self.alpha,
        }


def differential_error(
    coded: pd.DataFrame,
    shares: Mapping[str, float],
    ppi: PPIResult,
    alpha: float,
    majority: int = 0,
    single: ArmRate | None = None,
    cross: ArmRate | None = None,
) -> DifferentialError:
    """`coded`: the adjudicators' coded control judgments (`accuracy.coded_controls`);
    `shares`: each adjudicator's share of the adjudicated judgments; `majority`: the k of
    `combine: majority` (0 for the mean of an item's adjudicators); `single`, `cross`: the
    adjudicated arms (None: b at its worst; no corrected difference)."""
    counts = _counts(coded)
    totals = {key: sum(c.get(key, (0, 0))[1] for c in counts.values()) for key in _keys()}
    weights = {r: w for r, w in shares.items() if w > 0}
    ties = {kind: _kind_correlation(coded, weights, kind) for kind in KINDS}
    rates = {
        key: _scale_rate(
            counts, weights, key, majority, _cell_effect(coded, weights, key), *ties[key[0]]
        )
        for key in _keys()
    }
    gaps = [_gap(rates, kind) for kind in KINDS]
    n_pub = (totals[("published", "cross")], totals[("published", "single")])
    n_unpub = (totals[("not_published", "cross")], totals[("not_published", "single")])
    bias = _bias(gaps[0], gaps[1], rates, single)
    corrected = _corrected(ppi, gaps[0], gaps[1], rates, cross, 1.0 - alpha)
    return DifferentialError(ppi, gaps[0], gaps[1], n_pub, n_unpub, alpha, bias, corrected)


def _keys() -> list[tuple[str, str]]:
    return [(kind, form) for kind in KINDS for form in FORMS]


def _counts(coded: pd.DataFrame) -> dict[str, dict[tuple[str, str], tuple[int, int]]]:
    """Per adjudicator, per (kind, form): (judgments called novel, judgments)."""
    out: dict[str, dict[tuple[str, str], tuple[int, int]]] = {}
    if coded.empty:
        return out
    for reviewer, rows in coded.groupby("reviewer_id"):
        cells = {}
        for kind, form in _keys():
            hit = rows[(rows["expected"] == kind) & (rows["control_kind"] == form)]
            cells[(kind, form)] = (int((hit["novel"] == 1.0).sum()), len(hit))
        out[str(reviewer)] = cells
    return out


def _scale_rate(
    counts: Mapping[str, Mapping[tuple[str, str], tuple[int, int]]],
    weights: Mapping[str, float],
    key: tuple[str, str],
    majority: int,
    deff: float = 1.0,
    rho: float = 0.0,
    rho_var: float = 0.0,
) -> _Rate | None:
    """The weighted "novel" rate of (kind, form) on the scale (the majority's with `majority`,
    its adjudicators' calls on one control correlated `rho`, the kind's, estimated with
    variance `rho_var`), its variance times the cell's design effect `deff`; None when a
    weighted adjudicator has no such control."""
    total = sum(weights.values())
    cells = [counts.get(r, {}).get(key, (0, 0)) for r in weights]
    if not total or any(n == 0 for _, n in cells):
        return None
    pairs = list(zip([weights[r] / total for r in weights], cells, strict=True))
    raw = sum(wi * k / n for wi, (k, n) in pairs)
    smooth = sum(wi * smoothed_rate(k, n) for wi, (k, n) in pairs)
    variance = sum(wi**2 * smoothed_var(k, n) for wi, (k, n) in pairs)
    # the slopes at the smoothed rate: at a raw 0 or 1 a majority's slope is 0
    slope = majority_slope(smooth, majority, rho)
    tie = float(majority_rho_slope(smooth, majority, rho))
    value = float(majority_rate(raw, majority, rho))
    return _Rate(value, float(slope**2 * variance * deff), tie, rho_var)


def _cell_effect(coded: pd.DataFrame, weights: Mapping[str, float], key: tuple[str, str]) -> float:
    """The (kind, form) cell's design effect (`statistics.clustered`): controls judged by
    several adjudicators covary."""
    if coded.empty:
        return 1.0
    kind, form = key
    cell = coded[(coded["expected"] == kind) & (coded["control_kind"] == form)]
    return design_effect(cell, weights, "novel")


def _kind_correlation(
    coded: pd.DataFrame, weights: Mapping[str, float], kind: str
) -> tuple[float, float]:
    """The correlation of two calls on one control of `kind` (both forms together: it is the
    controls' spread in difficulty, and twice the controls estimate it with half the noise)
    and its estimate's variance."""
    if coded.empty:
        return 0.0, 0.0
    cell = coded[coded["expected"] == kind]
    raw, var, _ = design_effect_var(cell, weights, "novel")
    rho, rho_var, _ = correlation(cell, max(1.0, raw), var)
    return rho, rho_var


def _gap(rates: Mapping[tuple[str, str], _Rate | None], kind: str) -> Gap | None:
    cross, single = rates[(kind, "cross")], rates[(kind, "single")]
    if cross is None or single is None:
        return None
    variance = cross.variance + single.variance + cross.rho_term(single)
    return Gap(cross.value - single.value, variance)


def _bias(
    pub: Gap | None,
    unpub: Gap | None,
    rates: Mapping[tuple[str, str], _Rate | None],
    single: ArmRate | None,
) -> Bias | None:
    """b at the single-field arm's corrected rate, or at its worst without one."""
    if pub is None or unpub is None:
        return None
    bias = _bias_at(rates, single, "single")
    if bias is None:  # b's worst over pi_s in [0, 1] is one of the gaps: `p_value` tests both
        worst = max((pub, unpub), key=lambda g: g.value)
        return Bias(worst.value, worst.variance, None)
    return bias


def _bias_at(
    rates: Mapping[tuple[str, str], _Rate | None], arm: ArmRate | None, form: str
) -> Bias | None:
    """b = g_pub + pi D (D = g_unpub - g_pub) at an arm's true novel rate pi = (p - fnr) / J
    through the controls of its form (clipped to [0, 1]), with the delta method's variance and
    covariance with theta. The arm's own form's controls enter both the gaps and pi, so their
    terms carry J_other / J_own; the arm's mean enters pi (and theta). None without the arm, a
    rate, or discriminating controls of either form."""
    own, other = form, "single" if form == "cross" else "cross"
    f, t = rates[("published", own)], rates[("not_published", own)]
    fo, to = rates[("published", other)], rates[("not_published", other)]
    if arm is None or f is None or t is None or fo is None or to is None:
        return None
    j, j_other = t.value - f.value, to.value - fo.value
    if not j > 0 or not math.isfinite(arm.rate):
        return None
    raw = (arm.rate - f.value) / j
    pi = min(1.0, max(0.0, raw))
    sign = 1.0 if form == "cross" else -1.0  # g = cross - single
    g_pub, g_unpub = sign * (f.value - fo.value), sign * (t.value - to.value)
    # where pi is clipped it does not move with the estimates it is made of
    slope = (g_unpub - g_pub) / j if pi == raw else 0.0
    scale = j_other / j if pi == raw else 1.0
    variance = (1.0 - pi) ** 2 * fo.variance + pi**2 * to.variance
    variance += scale**2 * ((1.0 - pi) ** 2 * f.variance + pi**2 * t.variance)
    variance += slope**2 * arm.variance
    variance += f.rho_term(fo, 1.0 - pi, scale) + t.rho_term(to, pi, scale)
    value = (1.0 - pi) * g_pub + pi * g_unpub
    return Bias(value, variance, pi, slope * arm.covariance)


def _var_less(se: float, gap: Gap | Bias) -> float:
    """var(theta - gap): theta's and the gap's variances less twice their covariance."""
    cov = gap.covariance if isinstance(gap, Bias) else 0.0
    return se**2 + gap.variance - 2.0 * cov


def _corrected(
    ppi: PPIResult,
    pub: Gap | None,
    unpub: Gap | None,
    rates: Mapping[tuple[str, str], _Rate | None],
    cross: ArmRate | None,
    level: float,
) -> Corrected | None:
    """pi_x - pi_s = (theta - b_x) / J_s exactly, b_x = pi_x g_unpub + (1 - pi_x) g_pub the
    bias at the cross-field arm's rate and J_s the single-field controls' J: Fieller's interval
    (`statistics.joint.fieller`) with b_x's variance and covariance with theta in the
    numerator's, and the numerator's covariance with J_s through the single-field controls."""
    fnr, tpr = rates[("published", "single")], rates[("not_published", "single")]
    bias = _bias_at(rates, cross, "cross")
    if pub is None or unpub is None or fnr is None or tpr is None or bias is None:
        return None
    j, var_j = tpr.value - fnr.value, tpr.variance + fnr.variance
    var_j += tpr.rho_slope**2 * tpr.rho_var + fnr.rho_slope**2 * fnr.rho_var
    if not j > 0 or bias.rate is None:
        return None
    pi = bias.rate  # the cross-field arm's
    q = ppi.quantile(0.5 + level / 2.0)
    se = max(_var_less(ppi.se, bias), 0.0) ** 0.5
    cov = pi * tpr.variance - (1.0 - pi) * fnr.variance  # cov(theta - b_x, J_s)
    low, high = fieller(ppi.estimate - bias.value, se, j, var_j, q, cov)
    estimate = min(1.0, max(-1.0, (ppi.estimate - bias.value) / j))
    return Corrected(estimate, float(low), float(high), level)


def _pair(n: tuple[int, int]) -> str:
    return f"{n[0]} / {n[1]}"


def _gap_text(g: Gap | Bias) -> str:
    return f"{g.value:+.3f} (SE {g.variance**0.5:.3f})"
