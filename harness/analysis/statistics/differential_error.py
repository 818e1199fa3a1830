"""Could the adjudicators' own differential error have made a `supported`?

Errors shared by the adjudicators (and the primary reviewers) that depend on the condition, such
as cross-field outputs that look novel to everyone, shift the adjudicated difference without any
true one. An adjudicator calls a published item of form c (cross-field, single-field) novel with
probability fnr_c and an unpublished one with tpr_c. When cross-field outputs are no more often
truly novel than single-field ones (rates pi_x <= pi_s), the expected adjudicated difference is

    fnr_x - fnr_s + pi_x J_x - pi_s J_s <= (1 - pi_s) (fnr_x - fnr_s) + pi_s (tpr_x - tpr_s),

(J_c = tpr_c - fnr_c, assumed >= 0 on cross-field items, as every `supported` on their scale
assumes), at most the larger of the two gaps g_pub = fnr_x - fnr_s and g_unpub = tpr_x - tpr_s,
and at most 0 when both are. So a `supported` is robust to that error when theta exceeds 0 and
both gaps: an intersection-union test (Berger 1982) of the three one-sided hypotheses
theta <= 0, theta <= g_pub, theta <= g_unpub, each rejected at alpha, so that no split of alpha
is needed. Each gap is estimated from the adjudicators' planted controls of both forms, their
rates weighted by the adjudicators' shares of the adjudicated judgments (with a majority of k:
M(rate_x) - M(rate_s) of the weighted rates, M the chance that most say novel), with the
variance of Agresti and Caffo's smoothed rates (delta method for M). The test of theta > g is
the joint statistic (theta - g) / sqrt(se(theta)^2 + var(g)) against theta's reference, as
`statistics.joint` tests the true difference.

It replaces a bound on the gaps from exact Clopper-Pearson bounds of every adjudicator's four
rates at alpha / (8 R) (Bonferroni), which with the controls a study plans (about 27 published
of each form per adjudicator) bounded the gap near 0.3 and so required a difference no study
reaches. Measured in `benchmarks/bench_instrument.py` (`require` columns).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from harness.analysis.statistics.joint import (
    majority_rate,
    majority_slope,
    smoothed_rate,
    smoothed_var,
)
from harness.analysis.statistics.ppi import PPIResult
from harness.study.records import JsonObject

__all__ = ["DifferentialError", "Gap", "differential_error"]

KINDS = ("published", "not_published")  # false "novel" on published, "novel" on unpublished
FORMS = ("cross", "single")


@dataclass(frozen=True)
class Gap:
    """The scale's cross - single gap in one kind's "novel" rate, estimated on controls."""

    value: float
    variance: float


@dataclass(frozen=True)
class DifferentialError:
    """The difference against the two gaps its adjudicators' controls estimate."""

    ppi: PPIResult
    published_gap: Gap | None  # None: a weighted adjudicator lacks controls of a form
    unpublished_gap: Gap | None
    published: tuple[int, int]  # counted control judgments (cross, single)
    unpublished: tuple[int, int]
    alpha: float

    def p_above(self, gap: Gap) -> float:
        """One-sided p of H0: theta <= the gap, with both estimates' uncertainty."""
        se = (self.ppi.se**2 + gap.variance) ** 0.5
        if not se > 0:
            return 0.0 if self.ppi.estimate > gap.value else 1.0
        return 1.0 - self.ppi._cdf((self.ppi.estimate - gap.value) / se)

    @property
    def p_value(self) -> float | None:
        """The intersection-union test's p: the largest of the three (None: a gap unmeasured)."""
        gaps = (self.published_gap, self.unpublished_gap)
        if any(g is None for g in gaps):
            return None
        return max(self.ppi.p_greater(), *(self.p_above(g) for g in gaps if g is not None))

    @property
    def robust(self) -> bool:
        p = self.p_value
        return p is not None and p < self.alpha

    def text(self) -> str:
        counts = (
            f"cross / single controls: {_pair(self.published)} published, "
            f"{_pair(self.unpublished)} unpublished"
        )
        if self.p_value is None:
            return (
                "the adjudicators' differential error (cross-field items called novel more often "
                f"whatever their truth) is not measured by their controls ({counts})"
            )
        gaps = ", ".join(
            f"{_gap(g)} on {kind} controls (p = {self.p_above(g):.3g} that the difference does "
            "not exceed it)"
            for kind, g in (
                ("published", self.published_gap),
                ("unpublished", self.unpublished_gap),
            )
            if g is not None
        )
        verdict = "robust to it" if self.robust else "NOT robust to it"
        return (
            f"the adjudicators' differential error (cross-field items called novel more often "
            f"whatever their truth), estimated as the cross - single gap in their novel calls: "
            f"{gaps}; the difference exceeds both at one-sided alpha = {self.alpha:g} "
            f"(intersection-union, {counts}): {verdict}"
        )

    def record(self) -> JsonObject:
        def part(g: Gap | None) -> JsonObject | None:
            return (
                None if g is None else {"gap": g.value, "se": g.variance**0.5, "p": self.p_above(g)}
            )

        return {
            "published": part(self.published_gap),
            "unpublished": part(self.unpublished_gap),
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
) -> DifferentialError:
    """`coded`: the adjudicators' coded control judgments (`accuracy.coded_controls`);
    `shares`: each adjudicator's share of the adjudicated judgments; `majority`: the k of
    `combine: majority` (0 for the mean of an item's adjudicators)."""
    counts = _counts(coded)
    totals = {key: sum(c.get(key, (0, 0))[1] for c in counts.values()) for key in _keys()}
    weights = {r: w for r, w in shares.items() if w > 0}
    gaps = [_gap_estimate(counts, weights, kind, majority) for kind in KINDS]
    n_pub = (totals[("published", "cross")], totals[("published", "single")])
    n_unpub = (totals[("not_published", "cross")], totals[("not_published", "single")])
    return DifferentialError(ppi, gaps[0], gaps[1], n_pub, n_unpub, alpha)


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


def _gap_estimate(
    counts: Mapping[str, Mapping[tuple[str, str], tuple[int, int]]],
    weights: Mapping[str, float],
    kind: str,
    majority: int,
) -> Gap | None:
    """The weighted cross - single gap in `kind`, on the majority's scale with `majority`."""
    total = sum(weights.values())
    if not total:
        return None
    rates, smooth, variances = {}, {}, {}
    w = [weights[r] / total for r in weights]
    for form in FORMS:
        cells = [counts.get(r, {}).get((kind, form), (0, 0)) for r in weights]
        if any(n == 0 for _, n in cells):
            return None
        pairs = list(zip(w, cells, strict=True))
        rates[form] = sum(wi * k / n for wi, (k, n) in pairs)
        smooth[form] = sum(wi * smoothed_rate(k, n) for wi, (k, n) in pairs)
        variances[form] = sum(wi**2 * smoothed_var(k, n) for wi, (k, n) in pairs)
    value = majority_rate(rates["cross"], majority) - majority_rate(rates["single"], majority)
    # the slope at the smoothed rates: at a raw 0 or 1 a majority's slope is 0
    variance = sum(majority_slope(smooth[f], majority) ** 2 * variances[f] for f in FORMS)
    return Gap(float(value), float(variance))


def _pair(n: tuple[int, int]) -> str:
    return f"{n[0]} / {n[1]}"


def _gap(g: Gap) -> str:
    return f"{g.value:+.3f} (SE {g.variance**0.5:.3f})"
