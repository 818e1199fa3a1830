"""The primary difference corrected for misclassification (Rogan-Gladen / matrix method).

A reviewer with sensitivity s and specificity p reports "novel" with probability
(1 - s) + J pi, J = s + p - 1, so each coded judgment y maps to (y - (1 - s)) / J, whose
expectation is pi. Applied through the primary per-topic difference (item mean over reviewers,
then condition means), the correction is linear in each reviewer's judgments:

    d'_t = sum_r (A_tr - B_tr (1 - s_r)) / J_r,

where A_tr sums w_j y_j and B_tr sums w_j over reviewer r's judgments in topic t, and w_j is the
judgment's weight in d_t (+1 for cross, -1/2 for each single with mean_of_singles, divided by the
item's coded reviews and the cell's items). With one pooled accuracy this is d_t / J. The interval
is a percentile bootstrap that resamples topics and, within each reviewer and expected verdict,
control judgments, so the uncertainty of the accuracy is carried into the corrected difference.

A pooled correction uses one accuracy: every reviewer's, weighted by their share of the real
judgments (harness.analysis.statistics.weighted), so d'_t = (sum_r A_tr - B_tr (1 - s_w)) / J_w.

The point estimate replaces 1/J by the second-order (delta-method) reciprocal J / (J^2 + v),
v the estimated variance of J: 1/J-hat over-corrects on average by about v / J^2 (12 % at
J = 0.2 and 7 % at J = 0.4 with 45 + 45 controls, by enumeration), J / (J^2 + v) leaves under
1.5 % at J >= 0.4 (tests/analysis/statistics/test_corrected.py). The expansion behind it
holds only while v / J-hat^2 is small: beyond RELIABLE (J-hat's coefficient of variation above
1/2) the omitted terms (3 v^2 / J^4 and up) are no longer negligible and J / (J^2 + v)
over-shrinks (true difference 0.2, J = 0.2, 45 + 45 controls: bias -0.049 against +0.026 for
1/J-hat). There the estimate is 1/J-hat and the result is flagged unreliable: J-hat is too
uncertain for any correction to be trusted. The bootstrap interval stays the percentile interval
of the plain ratio, whose coverage the simulation benchmark measures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from harness.analysis.statistics.consensus import CROSS, SINGLE_A, SINGLE_B, Judgments, TopicTable

MIN_J = 0.05  # below this J the correction divides by ~0: no corrected estimate
CHUNK = 250  # bootstrap resamples per vectorised block, at most ...
CELLS = 4_000_000  # ... this many resampled topic-group cells at once
# largest v / J-hat^2 for the second-order estimate: J-hat's coefficient of variation up to 1/2,
# so J lies more than 2 SD above 0 and the expansion of 1/J converges. Beyond it 1/J-hat is used
# and the estimate is flagged unreliable. (0.1 switched too early: at J = 0.4 with 45 + 45
# controls the bias went from -0.003 to +0.006; benchmarks/bench_controls.py part 2b.)
RELIABLE = 0.25
CorrectionMethod = Literal["pooled", "per_reviewer"]


@dataclass(frozen=True)
class ControlCounts:
    """Per accuracy group (one per reviewer, or one pooled): judged and correct controls."""

    labels: list[str]
    pub_n: np.ndarray
    pub_correct: np.ndarray
    unpub_n: np.ndarray
    unpub_correct: np.ndarray

    def sensitivity(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            result: np.ndarray = self.pub_correct / self.pub_n
            return result

    def youden(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            result: np.ndarray = self.sensitivity() + self.unpub_correct / self.unpub_n - 1.0
            return result


@dataclass(frozen=True)
class Corrected:
    method: CorrectionMethod
    observed: float
    estimate: float | None  # None when an accuracy is not estimable or J <= MIN_J
    ci_low: float | None
    ci_high: float | None
    level: float
    resamples: int
    note: str
    unreliable: bool = False  # some v / J-hat^2 > RELIABLE: plain 1/J-hat, J-hat too uncertain


def judgment_weights(j: Judgments, y: np.ndarray, table: TopicTable) -> np.ndarray:
    """Each judgment's weight in d_t (zero for uncoded judgments and incomplete topics)."""
    coded = ~np.isnan(y)
    valid = np.bincount(j.item[coded], minlength=j.n_items).astype(float)
    cond = j.item_condition
    coef = np.zeros(3)
    coef[CROSS] = 1.0
    if table.single == "mean_of_singles":
        coef[[SINGLE_A, SINGLE_B]] = -0.5
    else:
        coef[SINGLE_A if table.single == "single_a" else SINGLE_B] = -1.0
    cells = table.n_items[j.item_topic, cond].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        item_w = np.where(table.item_eligible, coef[cond] / (valid * cells), 0.0)
    keep = coded & table.complete[j.topic]
    return np.where(keep, item_w[j.item], 0.0)


def topic_weights(
    j: Judgments, y: np.ndarray, table: TopicTable, groups: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """A (T, G) and B (T, G) of the complete topics, for judgments grouped by `groups`."""
    w = judgment_weights(j, y, table)
    index = j.topic * n_groups + groups
    size = j.n_topics * n_groups
    a = np.bincount(index, weights=w * np.nan_to_num(y), minlength=size)
    b = np.bincount(index, weights=w, minlength=size)
    complete = table.complete
    return (a.reshape(j.n_topics, n_groups)[complete], b.reshape(j.n_topics, n_groups)[complete])


def group_shares(
    j: Judgments, y: np.ndarray, table: TopicTable, groups: np.ndarray, n_groups: int
) -> np.ndarray:
    """Each group's share of the absolute weights of the real judgments in d_t."""
    total = np.bincount(groups, weights=np.abs(judgment_weights(j, y, table)), minlength=n_groups)
    return total / total.sum() if total.sum() > 0 else total


def inverse_youden(youden: np.ndarray, var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Estimate of 1/J: second-order J / (J^2 + v) where v / J^2 <= RELIABLE, else 1/J-hat;
    and where the second-order form was used."""
    with np.errstate(invalid="ignore", divide="ignore"):
        reliable = var <= RELIABLE * youden**2
        inverse: np.ndarray = np.where(reliable, youden / (youden**2 + var), 1.0 / youden)
    return inverse, reliable


def _ratio(a: np.ndarray, b: np.ndarray, sens: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """Mean corrected difference for (..., G) sums over topics already averaged; `inverse`
    stands for 1/J of each group."""
    result: np.ndarray = ((a - b * (1.0 - sens)) * inverse).sum(axis=-1)
    return result


def _accuracy(
    counts: ControlCounts, shares: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sensitivity, J and J's estimated variance per group, or collapsed to one by `shares`."""
    sens = counts.sensitivity()
    with np.errstate(invalid="ignore", divide="ignore"):
        spec = counts.unpub_correct / counts.unpub_n
        var = sens * (1 - sens) / counts.pub_n + spec * (1 - spec) / counts.unpub_n
    if shares is None:
        return sens, sens + spec - 1.0, var
    covered = shares > 0
    w = shares[covered]

    def pool(x: np.ndarray) -> np.ndarray:
        return np.array([np.sum(w * x[covered])])

    return pool(sens), pool(sens + spec - 1.0), np.array([np.sum(w**2 * var[covered])])


def corrected_difference(
    a: np.ndarray,
    b: np.ndarray,
    counts: ControlCounts,
    *,
    method: CorrectionMethod,
    resamples: int,
    level: float,
    seed: int,
    shares: np.ndarray | None = None,
) -> Corrected:
    """Point estimate and joint topic-and-control bootstrap interval.

    With `shares` (pooled correction) the groups' accuracies are collapsed into one weighted
    accuracy and a, b into one column; groups with share 0 need no controls."""
    n = a.shape[0]
    if shares is not None:
        a, b = a.sum(axis=1, keepdims=True), b.sum(axis=1, keepdims=True)
    observed = float(a.sum() / n) if n else math.nan
    sens, youden, var = _accuracy(counts, shares)
    if n == 0 or not np.all(np.isfinite(youden)):
        return _no_estimate(
            method,
            observed,
            level,
            "accuracy not estimable: some reviewer group lacks published or unpublished controls",
        )
    if np.any(youden <= MIN_J):
        return _no_estimate(
            method,
            observed,
            level,
            f"J = {float(youden.min()):.3f} <= {MIN_J}: the reviewers do not "
            "discriminate, so the correction would divide by about zero",
        )
    inverse, reliable = inverse_youden(youden, var)
    estimate = float(_ratio(a.mean(axis=0), b.mean(axis=0), sens, inverse))
    draws, invalid = _bootstrap(a, b, counts, shares, resamples, seed)
    tail = (1.0 - level) / 2.0
    # order statistics, not interpolation: an unbounded resample must not turn the bound into NaN
    low = float(np.quantile(np.where(invalid, -np.inf, draws), tail, method="lower"))
    high = float(np.quantile(np.where(invalid, np.inf, draws), 1.0 - tail, method="higher"))
    return Corrected(
        method,
        observed,
        estimate,
        _finite(low),
        _finite(high),
        level,
        resamples,
        _estimate_note(youden, var, reliable)
        + "; percentile bootstrap over topics and control judgments"
        + (
            f"; {invalid.mean():.1%} of resamples had J* <= {MIN_J} and count as unbounded"
            if invalid.any()
            else ""
        ),
        unreliable=not bool(reliable.all()),
    )


def _estimate_note(youden: np.ndarray, var: np.ndarray, reliable: np.ndarray) -> str:
    if reliable.all():
        return "second-order estimate"
    worst = float(np.max(var / youden**2))
    return (
        f"UNRELIABLE: J is too uncertain (var / J^2 = {worst:.2f} > {RELIABLE:g}), so the "
        "estimate uses 1/J-hat, which over-corrects on average"
    )


def _no_estimate(method: CorrectionMethod, observed: float, level: float, note: str) -> Corrected:
    return Corrected(method, observed, None, None, None, level, 0, note)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    counts: ControlCounts,
    shares: np.ndarray | None,
    resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = a.shape[0]
    out = np.empty(resamples)
    bad = np.zeros(resamples, dtype=bool)
    groups = counts.pub_n.size
    chunk = max(1, min(CHUNK, CELLS // max(n * a.shape[1], 1)))
    covered = np.ones(groups, dtype=bool) if shares is None else shares > 0
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        picks = rng.integers(0, n, size=(size, n))  # topics drawn
        a_star, b_star = a[picks].mean(axis=1), b[picks].mean(axis=1)  # (size, G)
        pub = rng.binomial(counts.pub_n, _rate(counts.pub_correct, counts.pub_n), (size, groups))
        unpub = rng.binomial(
            counts.unpub_n, _rate(counts.unpub_correct, counts.unpub_n), (size, groups)
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            sens = np.where(covered, pub / counts.pub_n, 0.0)
            youden = np.where(covered, sens + unpub / counts.unpub_n - 1.0, 0.0)
        if shares is not None:
            sens, youden = sens @ shares[:, None], youden @ shares[:, None]  # (size, 1)
        bad[start : start + size] = np.any(youden <= MIN_J, axis=1)
        out[start : start + size] = _ratio(a_star, b_star, sens, 1.0 / np.maximum(youden, MIN_J))
    return out, bad


def _rate(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.asarray(k, dtype=float) / np.maximum(np.asarray(n, dtype=float), 1.0)
    return result


def control_counts(coded: pd.DataFrame, labels: list[str], by_reviewer: bool) -> ControlCounts:
    """Counts per reviewer in `labels` order (or one pooled group) from coded controls."""
    if not by_reviewer:
        coded = coded.assign(reviewer_id="all")
        labels = ["all"]
    pub = coded[coded["expected"] == "published"].groupby("reviewer_id")["correct"]
    unpub = coded[coded["expected"] == "not_published"].groupby("reviewer_id")["correct"]

    def col(series: pd.Series) -> np.ndarray:
        return series.reindex(labels).fillna(0).to_numpy(dtype=np.int64)

    return ControlCounts(
        labels, col(pub.size()), col(pub.sum()), col(unpub.size()), col(unpub.sum())
    )
