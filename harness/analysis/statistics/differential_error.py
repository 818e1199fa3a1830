"""Could the adjudicators' own differential error have made a `supported`?

Errors shared by the adjudicators (and the primary reviewers) that depend on the condition, such
as cross-field outputs that look novel to everyone, shift the adjudicated difference without any
true one. An adjudicator calls a published item of form c (cross-field, single-field) novel with
probability fnr_c and an unpublished one with tpr_c. When cross-field outputs are no more often
truly novel than single-field ones (rates pi_x <= pi_s), the expected adjudicated difference is

    fnr_x - fnr_s + pi_x J_x - pi_s J_s <= (1 - pi_s) (fnr_x - fnr_s) + pi_s (tpr_x - tpr_s),

(J_c = tpr_c - fnr_c, assumed >= 0 on cross-field items, as every `supported` on their scale
assumes), at most the larger of the two gaps. With the mean of an item's adjudicators the
scale's gap is the adjudicators' gaps weighted by their share of the adjudicated judgments; with
a majority of k it is M(rate_x) - M(rate_s), M(p) the chance that a majority says novel, which
grows with every adjudicator's rate, so the highest cross-field and the lowest single-field
rate bound it.

Each rate's bound is exact (Clopper-Pearson) per adjudicator: one adjudicator judges each control
item once, so their judgments are independent draws from the control bank, where pooled
judgments of the same items by several adjudicators are not. The 4 x R rates (two forms, two
kinds, R adjudicators) get one-sided bounds at alpha / (8 R) each, so the gaps' bound holds with
probability at least 1 - alpha / 2 (Bonferroni); the adjudicated difference's lower bound at
alpha / 2 is the tipping point, the largest such error that leaves the difference significant at
one-sided alpha / 2. A `supported` is robust when the tipping point exceeds the bound: both hold
together with probability at least 1 - alpha.

Measured (`benchmarks/bench_instrument.py`): with the controls a study plans (about 27 published
of each form, pooled), the bound is near 0.3, so requiring robustness (`adjudication.differential:
require`) is valid where errors are differential but leaves almost no power; the default
(`report`) keeps the verdict and says how robust it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from harness.analysis.statistics.accuracy import clopper_pearson
from harness.analysis.statistics.joint import majority_rate
from harness.analysis.statistics.ppi import PPIResult
from harness.study.records import JsonObject

__all__ = ["DifferentialError", "differential_error", "rate_bounds"]

KINDS = ("published", "not_published")  # false "novel" on published, "novel" on unpublished
FORMS = ("cross", "single")


@dataclass(frozen=True)
class DifferentialError:
    """The tipping point of a `supported` and what the adjudicators' controls allow."""

    tipping: float  # lower bound of the adjudicated difference at one-sided alpha / 2
    gap_published: float | None  # false "novel" on published controls, cross - single
    gap_unpublished: float | None  # "novel" on unpublished controls, cross - single
    bound: float | None  # upper bound of the scale's larger gap (None: a form is unmeasured)
    published: tuple[int, int]  # counted control judgments (cross, single)
    unpublished: tuple[int, int]
    alpha: float

    @property
    def robust(self) -> bool:
        return self.bound is not None and self.tipping > max(self.bound, 0.0)

    def text(self) -> str:
        half = f"one-sided alpha/2 = {self.alpha / 2:g}"
        if self.tipping <= 0:
            head = (
                f"the difference is not significant at {half} even without differential error "
                f"of the adjudicators (lower bound {self.tipping:+.3f})"
            )
        else:
            head = (
                f"a differential error of the adjudicators (cross-field items called novel more "
                f"often whatever their truth) below {self.tipping:+.3f} would leave the "
                f"difference significant at {half}"
            )
        counts = (
            f"cross / single controls: {_pair(self.published)} published, "
            f"{_pair(self.unpublished)} unpublished"
        )
        if self.bound is None:
            return f"{head}; their controls do not measure it ({counts})"
        verdict = "robust to it" if self.robust else "NOT robust to it"
        return (
            f"{head}; their controls bound it at {self.bound:+.3f} (exact bounds per adjudicator, "
            f"{1 - self.alpha / 2:.1%} together; observed gaps {_num(self.gap_published)} on "
            f"published and {_num(self.gap_unpublished)} on unpublished controls; {counts}): "
            f"{verdict}"
        )

    def record(self) -> JsonObject:
        return {
            "tipping": self.tipping,
            "gap_published": self.gap_published,
            "gap_unpublished": self.gap_unpublished,
            "bound": self.bound,
            "robust": self.robust,
            "published": list(self.published),
            "unpublished": list(self.unpublished),
            "alpha": self.alpha,
        }


def rate_bounds(k: int, n: int, tail: float) -> tuple[float, float]:
    """One-sided exact (Clopper-Pearson) lower and upper bounds of k of n, each at `tail`; the
    whole range [0, 1] without judgments."""
    return (0.0, 1.0) if n == 0 else clopper_pearson(k, n, 1.0 - 2.0 * tail)


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
    tipping = float(ppi.interval(1.0 - alpha)[0])
    counts = _counts(coded)
    totals = {key: sum(c[key][1] for c in counts.values()) for key in _keys()}
    gap_pub, gap_unpub = (_pooled_gap(counts, kind) for kind in KINDS)
    n_pub = (totals[("published", "cross")], totals[("published", "single")])
    n_unpub = (totals[("not_published", "cross")], totals[("not_published", "single")])
    weights = {r: w for r, w in shares.items() if w > 0}
    if not weights or min(totals.values()) == 0:
        return DifferentialError(tipping, gap_pub, gap_unpub, None, n_pub, n_unpub, alpha)
    tail = alpha / (8 * len(weights))
    bound = max(_gap_bound(counts, weights, kind, tail, majority) for kind in KINDS)
    return DifferentialError(tipping, gap_pub, gap_unpub, bound, n_pub, n_unpub, alpha)


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


def _pooled_gap(
    counts: Mapping[str, Mapping[tuple[str, str], tuple[int, int]]], kind: str
) -> float | None:
    rates = []
    for form in FORMS:
        k = sum(c[(kind, form)][0] for c in counts.values())
        n = sum(c[(kind, form)][1] for c in counts.values())
        if n == 0:
            return None
        rates.append(k / n)
    return rates[0] - rates[1]


def _gap_bound(
    counts: Mapping[str, Mapping[tuple[str, str], tuple[int, int]]],
    weights: Mapping[str, float],
    kind: str,
    tail: float,
    majority: int,
) -> float:
    """Upper bound of the scale's gap in `kind`: an adjudicator without controls of a form has
    the whole range [0, 1] for that rate."""
    highs, lows = [], []
    for reviewer in weights:
        cells = counts.get(reviewer, {})
        highs.append(rate_bounds(*cells.get((kind, "cross"), (0, 0)), tail)[1])
        lows.append(rate_bounds(*cells.get((kind, "single"), (0, 0)), tail)[0])
    if majority:
        return float(majority_rate(max(highs), majority) - majority_rate(min(lows), majority))
    total = sum(weights.values())
    w = [weights[r] / total for r in weights]
    return sum(wi * (h - lo) for wi, h, lo in zip(w, highs, lows, strict=True))


def _pair(n: tuple[int, int]) -> str:
    return f"{n[0]} / {n[1]}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"
