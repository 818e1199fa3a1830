"""Control items judged by several adjudicators: their judgments are not independent.

`judge --blind` routes each control item to several adjudicators (as many as judge each real
item), so a control that is hard (an obscure published link, an unpublished combination that
sounds familiar) is hard for all of them at once. The rates' variances and effective counts of
`statistics.weighted` and `statistics.differential_error` count every judgment as independent,
which understates them when items differ in difficulty (by 27-30% with item difficulty
Beta(1.5) and two adjudicators on every control, in an independent review's simulation).

The design effect corrects that: the weighted rate is sum_a (w_a / n_a) sum_i y_ai, so its
variance with items as clusters (the sandwich, Liang and Zeger 1986) is sum_i (sum_a (w_a / n_a)
(y_ai - r_a))^2, against sum_{a,i} ((w_a / n_a) (y_ai - r_a))^2 with every judgment independent.
Their ratio, at least 1, multiplies the variances and divides the effective counts. With no item
judged twice it is exactly 1; with items judged twice but no difference in difficulty it is 1 in
expectation, and the floor at 1 costs a little power (the ratio's noise) for validity.

Items are clustered by their control (`control_id`: the known link or file entry the item was
made from), so that two items made from one link count as one cluster too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.analysis.statistics.joint import RHO_MAX
from harness.analysis.statistics.weighted import Weighted

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["clustered", "correlation", "design_effect", "design_effect_var", "rho_variance"]

CLUSTER = "control_id"


def correlation(
    cell: pd.DataFrame, deff: float, deff_var: float = 0.0, deff_cov: float = 0.0
) -> tuple[float, float, float]:
    """The correlation of two calls on one control implied by a design effect, 1 + (m - 1) rho
    with m the mean number of calls per control (0 when no control is judged twice), its
    variance and its covariance with the rate, from the design effect's (`deff_var`,
    `deff_cov`)."""
    if CLUSTER not in cell.columns or cell.empty:
        return 0.0, 0.0, 0.0
    m = len(cell) / cell[CLUSTER].nunique()
    if not m > 1:
        return 0.0, 0.0, 0.0
    rho = min(max((deff - 1.0) / (m - 1.0), 0.0), RHO_MAX)
    return rho, rho_variance(deff_var, m, cell[CLUSTER].nunique()), deff_cov / (m - 1.0)


def rho_variance(deff_var: Any, m: float, controls: Any) -> Any:
    """rho-hat's variance, deff_var / (m - 1)^2, at least its value under independent calls,
    2 / (m (m - 1) C) with C controls: where at most one reviewer errs on a kind every
    influence is 0 and the delta method would call rho known (8-22% of studies with 40
    controls each at accuracy 0.9, whose bounds then covered 69-81%)."""
    return np.maximum(deff_var / (m - 1.0) ** 2, 2.0 / (m * (m - 1.0) * controls))


def design_effect(cell: pd.DataFrame, shares: Mapping[str, float], value: str) -> float:
    """The design effect of one cell's weighted rate (`value`: the column averaged, `correct` or
    `novel`) over the reviewers in `shares`; 1 without a cluster column or any variation."""
    return max(1.0, design_effect_var(cell, shares, value)[0])


def design_effect_var(
    cell: pd.DataFrame, shares: Mapping[str, float], value: str
) -> tuple[float, float, float]:
    """The design effect before its floor, a ratio of sums over controls (T_c^2 over I_c: the
    squared sum of a control's weighted residuals T_c, and the sum of their squares), with the
    variance and the covariance with the weighted rate of the delta method for a ratio: each
    control's influence (T_c^2 - R I_c) / sum_c I_c, the rate's T_c (the reviewers' rates held
    fixed: the residuals sum to zero, so their estimation enters at second order); (1, 0, 0)
    without a cluster column or any variation."""
    positive = {str(r): w for r, w in shares.items() if w > 0}  # ids compared as text
    keep = cell["reviewer_id"].astype(str).isin(list(positive))
    rows = cell[keep]
    if rows.empty or CLUSTER not in rows.columns:
        return 1.0, 0.0, 0.0
    y = rows[value].astype(float)
    by = rows["reviewer_id"].astype(str)
    present = by.unique()
    total = sum(positive[r] for r in present)
    weight = by.map({r: positive[r] / total for r in present}) / by.map(by.value_counts())
    part = weight * (y - y.groupby(by).transform("mean"))
    residual = part.groupby(rows[CLUSTER]).sum()  # T_c
    alone = (part**2).groupby(rows[CLUSTER]).sum()  # I_c
    independent = float(alone.sum())
    if not independent > 0:
        return 1.0, 0.0, 0.0
    ratio = float((residual**2).sum()) / independent
    influence = (residual**2 - ratio * alone) / independent
    return ratio, float((influence**2).sum()), float((influence * residual).sum())


def clustered(weighted: Weighted, coded: pd.DataFrame) -> Weighted:
    """`weighted` with each kind's effective count divided, and its rate's variance multiplied,
    by that kind's design effect."""
    acc = weighted.accuracy
    if not acc.estimable or coded.empty:
        return weighted
    cells = [coded[coded["expected"] == kind] for kind in ("published", "not_published")]
    raw = [design_effect_var(cell, weighted.shares, "correct") for cell in cells]
    deff = [max(1.0, r) for r, _, _ in raw]
    ties = [correlation(c, d, v, w) for c, d, (_, v, w) in zip(cells, deff, raw, strict=True)]
    (rho_p, pub_var, pub_cov), (rho_u, unpub_var, unpub_cov) = ties
    if deff == [1.0, 1.0] and pub_var == unpub_var == 0.0:
        return weighted
    pub, unpub = acc.published / deff[0], acc.unpublished / deff[1]
    acc = replace(
        acc,
        published=pub,
        published_correct=acc.sensitivity * pub,
        unpublished=unpub,
        unpublished_correct=acc.specificity * unpub,
    )
    variances = weighted.variances
    if variances is not None:
        variances = (variances[0] * deff[0], variances[1] * deff[1])
    return replace(
        weighted,
        accuracy=acc,
        variances=variances,
        rho=(rho_p, rho_u),
        rho_var=(pub_var, unpub_var),
        rho_cov=(pub_cov, unpub_cov),
    )
