"""Reviewer accuracy in the analysis: who is left out, the gate on J, the corrected difference and
the equivalence that `refuted` rests on.

The corrected-scale equivalence for a pooled correction: with non-differential misclassification
the observed difference is J times the true one (J of every reviewer weighted by their share of
the real judgments, harness.analysis.statistics.weighted), so |true| >= SESOI implies |observed| >=
J * SESOI >= J_L * SESOI whenever J >= J_L. Testing the observed differences against the margin
J_L * SESOI at alpha/2, with J_L the one-sided exact (Bonferroni) lower bound of J at 1 - alpha/2,
keeps the size at most alpha, with whatever validity the observed-scale test has. Reviewers of
real items without controls of both kinds count as J = 0 (the worst case), so J_L and the gate's
bound are the covered reviewers' bounds times (1 - their uncovered share). With a
per-reviewer correction no such bound exists, and equivalence rests on the bootstrap interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.analysis.plan.plan_file import Plan
from harness.analysis.statistics.accuracy import (
    CONTROL_COLUMNS,
    Accuracy,
    Differential,
    accuracy_table,
    clopper_pearson,
    coded_controls,
    differential,
    excluded_reviewers,
)
from harness.analysis.statistics.clustered import clustered
from harness.analysis.statistics.consensus import CROSS, Judgments, TopicTable
from harness.analysis.statistics.corrected import (
    Corrected,
    control_counts,
    corrected_difference,
    group_shares,
    topic_weights,
)
from harness.analysis.statistics.equivalence import Equivalence, betting, paired_t, tango
from harness.analysis.statistics.weighted import Weighted, weighted_accuracy


@dataclass(frozen=True)
class ControlsAnalysis:
    table: list[Accuracy]
    excluded: list[str]
    n_controls: int  # distinct control items with a counted judgment
    n_judgments: int
    pooled: Accuracy  # every counted control judgment, as judged
    weighted: Weighted  # the accuracy the gate, the bound and the correction use
    differential: Differential | None
    corrected: Corrected | None
    equivalence: Equivalence | None  # on the corrected scale (pooled: scaled margin)
    youden_bound: float | None  # J_L used to scale the margin
    gate_ok: bool
    gate_reason: str


def reviewer_accuracy(
    frame: pd.DataFrame | None, plan: Plan
) -> tuple[pd.DataFrame, list[Accuracy], list[str]]:
    """Coded controls, the accuracy table of every reviewer, and who falls below the threshold."""
    frame = frame if frame is not None else pd.DataFrame(columns=list(CONTROL_COLUMNS))
    coded = coded_controls(frame, plan.outcome.unsure)
    table = accuracy_table(coded, plan.controls.level)
    return coded, table, excluded_reviewers(table, plan.controls.exclude_reviewer_below)


def keep_reviewers(j: Judgments, excluded: list[str]) -> Judgments:
    if not excluded or j.reviewer_ids is None:
        return j
    out = np.isin(np.asarray(j.reviewer_ids, dtype=object)[j.reviewer], excluded)
    return j.subset(~out)


def analyse_controls(
    j: Judgments,
    y: np.ndarray,
    table: TopicTable,
    coded: pd.DataFrame,
    accuracy: list[Accuracy],
    excluded: list[str],
    plan: Plan,
    consensus: dict[str, int],
    uncounted: str | None = None,
) -> ControlsAnalysis:
    c, alpha = plan.controls, plan.primary.alpha
    coded = coded[~coded["reviewer_id"].isin(excluded)]
    kept = [a for a in accuracy if a.scope == "reviewer" and a.label not in excluded]
    pooled = next(a for a in accuracy_table(coded, c.level) if a.scope == "pooled")
    labels, groups = _reviewer_groups(j, [a.label for a in kept])
    shares = group_shares(j, y, table, groups, len(labels))
    weighted = weighted_accuracy(kept, dict(zip(labels, shares.tolist(), strict=True)), c.level)
    # controls judged by several reviewers covary (`statistics.clustered`)
    weighted = clustered(weighted, coded)
    acc = weighted.accuracy
    gate_ok, gate_reason = discrimination_gate(weighted, plan, uncounted=uncounted)
    if gate_ok:
        gate_ok, gate_reason = _varied(y, gate_reason)
    if gate_ok:
        gate_ok, gate_reason = _compatible(j, y, acc, gate_reason)
    corrected = equivalence = bound = None
    if len(coded):
        corrected = _corrected(j, y, table, coded, labels, groups, weighted, plan)
        equivalence, bound = _corrected_equivalence(table.d, weighted, corrected, plan, consensus)
    return ControlsAnalysis(
        table=accuracy,
        excluded=excluded,
        n_controls=int(coded["control_id"].nunique()),
        n_judgments=len(coded),
        pooled=pooled,
        weighted=weighted,
        differential=differential(coded, alpha),
        corrected=corrected,
        equivalence=equivalence,
        youden_bound=bound,
        gate_ok=gate_ok,
        gate_reason=gate_reason,
    )


def _reviewer_groups(j: Judgments, reviewers: list[str]) -> tuple[list[str], np.ndarray]:
    """Group index of every judgment by reviewer; reviewers of real items without counted
    controls share a last group "<none>"."""
    if j.reviewer_ids is None:
        return ["<none>"], np.zeros(j.n, dtype=np.int64)
    ids = np.asarray(j.reviewer_ids, dtype=object)[j.reviewer]
    groups = pd.Index(reviewers).get_indexer(ids)
    return [*reviewers, "<none>"], np.where(groups < 0, len(reviewers), groups)


@dataclass(frozen=True)
class GateWords:
    """How the gate's reasons name the tier it measures."""

    none_judged: str  # no control judged at all
    one_kind: str  # controls judged, but nobody judged both answers
    unmeasured: str  # "<accuracy> cannot be estimated"
    who: str  # "the reviewers"
    weighted: str  # what J is weighted by
    uncovered: str  # "<who> with x% of <what>"


PRIMARY_WORDS = GateWords(
    none_judged="no control items were judged",
    one_kind="no reviewer of real items has judged both published and unpublished controls",
    unmeasured="reviewer accuracy",
    who="the reviewers",
    weighted="J = {j} (every reviewer's accuracy weighted by their share of the real judgments)",
    uncovered="reviewers with {u} of the real judgments",
)


def discrimination_gate(
    weighted: Weighted,
    plan: Plan,
    words: GateWords = PRIMARY_WORDS,
    uncounted: str | None = None,
) -> tuple[bool, str]:
    """Whether the exact lower bound of the weighted J (reviewers without controls of both kinds
    counting as J = 0) reaches `controls.min_youden`, and the reason in words. `uncounted` says
    why control judgments that exist count for nothing (`accuracy.uncounted_controls`)."""
    c, acc, uncovered = plan.controls, weighted.accuracy, weighted.uncovered
    if not acc.estimable:
        none = uncounted or words.none_judged
        what = none if acc.published + acc.unpublished == 0 else words.one_kind
        return False, (
            f"{words.unmeasured} cannot be estimated ({what}), so {words.who} "
            "could not be shown to discriminate published from unpublished work"
        )
    low, high = acc.youden_ci()
    text = (
        f"{words.weighted.format(j=format(acc.youden, '.3f'))}, {c.level:.0%} exact interval "
        f"[{low:.3f}, {high:.3f}] from {acc.published:.1f} published and "
        f"{acc.unpublished:.1f} unpublished effective control judgments"
    )
    if uncovered > 0:
        low = weighted.floor(low)
        text += (
            f"; {words.uncovered.format(u=format(uncovered, '.1%'))} had no controls of both "
            f"kinds and count as J = 0, so the lower bound is {low:.3f}"
        )
    if low < c.min_youden:
        return False, (
            f"{words.who} could not be shown to discriminate: {text}; the plan requires its "
            f"lower bound to be at least {c.min_youden:g}"
        )
    return True, text


def _varied(y: np.ndarray, reason: str) -> tuple[bool, str]:
    """Accuracy measured on controls describes the real judgments only if they vary: reviewers
    who gave one verdict to every real item (but answered controls well, e.g. because controls
    are recognisable) produce d_t = 0 everywhere, which must not read as equivalence."""
    coded = y[~np.isnan(y)]
    if coded.size and coded.min() == coded.max():
        verdict = "novel" if coded[0] == 1.0 else "not novel"
        return False, (
            f"every one of the {coded.size} coded real judgments is {verdict}, so "
            f"the accuracy shown on controls ({reason}) does not describe them and "
            "the reviewers could not be shown to discriminate among real items"
        )
    return True, reason


def _compatible(j: Judgments, y: np.ndarray, acc: Accuracy, reason: str) -> tuple[bool, str]:
    """Whether the real judgments could come from reviewers as accurate as the controls show.

    Under the misclassification model the novel rate q of any arm lies in [1 - sensitivity,
    specificity]. When an arm's exact interval for q lies wholly outside what the accuracy's
    exact intervals allow, the reviewers did not judge real items as they judged controls (for
    example because controls were recognisable), and their accuracy cannot correct the difference.
    """
    level = acc.level
    sens = acc.sensitivity_ci(level)
    spec = acc.specificity_ci(level)
    cross = j.condition == CROSS
    for name, arm in (("cross-field", cross), ("single-field", ~cross)):
        coded = y[arm & ~np.isnan(y)]
        if not coded.size:
            continue
        q_low, q_high = clopper_pearson(int(coded.sum()), int(coded.size), level)
        if q_high < 1.0 - sens[1] or q_low > spec[1]:
            return False, (
                f"the {name} real judgments are novel in {coded.mean():.3f} of {coded.size} "
                f"(exact interval [{q_low:.3f}, {q_high:.3f}]), outside the range "
                f"[{1.0 - sens[1]:.3f}, {spec[1]:.3f}] that reviewers as accurate as the controls "
                f"show ({reason}) can produce: their accuracy on controls does not describe how "
                "they judged real items"
            )
    return True, reason


def _corrected(
    j: Judgments,
    y: np.ndarray,
    table: TopicTable,
    coded: pd.DataFrame,
    labels: list[str],
    groups: np.ndarray,
    weighted: Weighted,
    plan: Plan,
) -> Corrected:
    c = plan.controls
    by_reviewer = c.correction == "per_reviewer"
    if by_reviewer and not (groups == len(labels) - 1).any():
        labels = labels[:-1]  # no reviewer of real items lacks controls: drop "<none>"
    counts = control_counts(coded, labels, by_reviewer=True)
    shares = None if by_reviewer else np.array([weighted.shares.get(x, 0.0) for x in labels])
    a, b = topic_weights(j, y, table, groups, len(labels))
    # alpha/2 per side, as the pooled path splits it: the per-reviewer equivalence decides with
    # this interval, so it must follow the plan's alpha (a fixed 95% is liberal when alpha < 0.05)
    return corrected_difference(
        a,
        b,
        counts,
        method=c.correction,
        resamples=c.bootstrap,
        level=1.0 - plan.primary.alpha,
        seed=c.seed,
        shares=shares,
    )


def _corrected_equivalence(
    d: np.ndarray,
    weighted: Weighted,
    corrected: Corrected,
    plan: Plan,
    consensus: dict[str, int],
) -> tuple[Equivalence | None, float | None]:
    alpha, sesoi = plan.primary.alpha, plan.equivalence.sesoi
    if plan.controls.correction == "per_reviewer":
        return _bootstrap_equivalence(corrected, plan), None
    if not weighted.accuracy.estimable:
        return None, None
    bound = weighted.floor(weighted.accuracy.youden_lower(alpha / 2))
    if not math.isfinite(bound) or bound <= 0:
        return None, bound
    margin = bound * sesoi
    method = plan.equivalence.method
    if method == "paired_t":
        eq = paired_t(d, margin, alpha / 2)
    elif method == "tango":
        eq = tango(consensus["b"], consensus["c"], d.size, margin, alpha / 2)
    else:
        eq = betting(d, margin, alpha / 2)
    return eq, bound


def _bootstrap_equivalence(corrected: Corrected, plan: Plan) -> Equivalence | None:
    if corrected.estimate is None:
        return None
    sesoi, half = plan.equivalence.sesoi, (1.0 - corrected.level) / 2
    low, high = corrected.ci_low, corrected.ci_high
    lo = low if low is not None else -math.inf
    hi = high if high is not None else math.inf
    # the (1 - alpha) percentile interval decides at alpha/2 per side
    return Equivalence(
        "bootstrap",
        sesoi,
        corrected.estimate,
        0.0 if lo > -sesoi else 1.0,
        0.0 if hi < sesoi else 1.0,
        lo,
        hi,
        half,
    )
