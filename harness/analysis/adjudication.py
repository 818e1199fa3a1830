"""The adjudicated scale: the prediction-powered estimate of the difference, the verdict's
tests on it, and the primary reviewers' accuracy on the real items drawn for adjudication.

Accuracy is coded as on the controls (`statistics.accuracy`): sensitivity is the share of items
the adjudicators call published that a reviewer calls not novel, specificity the share of items
they call unpublished that the reviewer calls novel; per arm (cross, single) with a Fisher test of
the difference, because accuracy that differs between the arms biases the primary reviewers'
comparison (the prediction-powered test stays valid, only its power suffers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from harness.analysis.data import StudyData, adjudicator_controls
from harness.analysis.plan.plan_file import Plan
from harness.analysis.report.results import (
    AccuracyRow,
    AdjudicatedModelRow,
    AdjudicationResult,
    ArmDifference,
)
from harness.analysis.statistics.accuracy import (
    Accuracy,
    Differential,
    accuracy_table,
    differential,
)
from harness.analysis.statistics.adjudicated import (
    Tiers,
    estimand_used,
    labelled_judgments,
    tiers,
)
from harness.analysis.statistics.consensus import ADJUDICATOR
from harness.analysis.statistics.corrected import inverse_youden
from harness.analysis.statistics.differential_error import DifferentialError
from harness.analysis.statistics.holm import holm_adjust
from harness.analysis.statistics.instrument import Instrument, corrected_interval, measure
from harness.analysis.statistics.ppi import PPIResult
from harness.analysis.statistics.verdict import joint_test
from harness.study.manifest_sections import Adjudication
from harness.study.records import JsonObject


@dataclass(frozen=True)
class Adjudicated:
    """What the verdict needs (the estimate and what withholds it) and what the report shows."""

    ppi: PPIResult
    withheld: list[str]
    result: AdjudicationResult
    per_model: list[tuple[str, PPIResult]]  # each model's own estimate (several models only)
    ceiling: str | None  # why the adjudicated scale cannot show "no difference", if it cannot
    instrument: Instrument  # the adjudicators' accuracy on their controls
    model_ceilings: dict[str, str | None] = field(default_factory=dict)  # the same, per model


# the true difference and its intervals: withheld together where the scale cannot give them
CORRECTED_FIELDS = (
    "corrected_estimate",
    "corrected_low",
    "corrected_high",
    "corrected_tost_low",
    "corrected_tost_high",
    "robust_estimate",
    "robust_low",
    "robust_high",
)


def roles_of(data: StudyData) -> np.ndarray:
    roles = data.roles
    if roles is None:
        return np.full(data.judgments.n_reviewers, "primary", dtype=object)
    return roles


def analyse_adjudication(
    data: StudyData, plan: Plan, draw: Adjudication | None
) -> Adjudicated | None:
    """None when the study has no adjudicated sample (its verdict is then provisional);
    `draw` is the manifest's record of the draw (`adjudication`)."""
    if not data.sampled_topics:
        return None
    roles = roles_of(data)
    t = tiers(data.judgments, roles, data.sampled, plan)
    ppi = t.estimate(plan)
    withheld = _withheld(t, ppi)
    coded = labelled_judgments(data.judgments, roles, t.adjudicated, plan.outcome.unsure)
    per_model, model_ceilings = _per_model(data, plan)
    instrument = measure(adjudicator_controls(data), _shares(data, roles), plan)
    single, cross = t.arms(ppi.lam)
    instrument = replace(instrument, single=single, cross=cross)
    result = _result(data, plan, t, ppi, coded, draw.record() if draw is not None else {})
    update: dict[str, object] = {"models": _model_rows(per_model, plan)}
    update |= _instrument_fields(instrument, ppi, plan)
    result = result.model_copy(update=update)
    ceiling = _ceiling(t, plan.equivalence.sesoi) or _degenerate(t, ppi, plan)
    if ceiling and result.rule == "joint":  # no spread: an interval of the truth would mislead
        update = dict.fromkeys(CORRECTED_FIELDS)
        result = result.model_copy(update=update)
    return Adjudicated(ppi, withheld, result, per_model, ceiling, instrument, model_ceilings)


def _shares(data: StudyData, roles: np.ndarray) -> dict[str, float]:
    """Each adjudicator's share of the adjudicated judgments of real items."""
    j = data.judgments
    ids = np.asarray(j.reviewer_ids if j.reviewer_ids is not None else [], dtype=object)
    theirs = j.reviewer[np.asarray(roles, dtype=object)[j.reviewer] == ADJUDICATOR]
    if not theirs.size:
        return {}
    codes, counts = np.unique(theirs, return_counts=True)
    return {str(ids[c]): float(n / counts.sum()) for c, n in zip(codes, counts, strict=True)}


def _instrument_fields(inst: Instrument, ppi: PPIResult, plan: Plan) -> dict[str, object]:
    """The adjudicators' own accuracy and what it makes of the estimate: fields of
    `AdjudicationResult` by name."""
    alpha, sesoi = plan.primary.alpha, plan.equivalence.sesoi
    margin = inst.margin(sesoi)
    usable = ppi.n_labelled >= 2
    p_margin = ppi.p_tost(margin) if usable and margin else None
    # at the plan's alpha, read by a significant difference's tipping point and the joint
    # rule's corrected interval alike: computed once, where either is reported
    wanted = ppi.p_greater() < alpha or joint_test(ppi, plan, inst) is not None
    error = inst.differential_error(ppi, plan) if usable and wanted else None
    acc = inst.weighted.accuracy
    corrected: tuple[float | None, float | None] = (None, None)
    estimate = None
    if usable and acc.estimable and inst.youden > 0:
        low, high = ppi.interval(1 - alpha)  # alpha/2 per side, and J's interval at 1 - alpha
        youden = acc.youden_ci(1 - alpha)
        uncovered = inst.weighted.uncovered  # their J counts as 0 below and 1 above
        high_j = (1 - uncovered) * youden[1] + uncovered
        corrected = corrected_interval(low, high, (inst.weighted.floor(youden[0]), high_j))
        estimate = _num(ppi.estimate * _inverse_youden(acc))
    rows = accuracy_rows(inst.coded, plan.controls.level) if len(inst.coded) else []
    if acc.published + acc.unpublished:
        rows.append({**acc.row(), "arm": "both"})
    fields: dict[str, object] = {
        "adjudicator_accuracy": rows,
        "adjudicator_differential": _diff_row(inst.differential) if inst.differential else None,
        "adjudicator_gate": inst.ok,
        "adjudicator_reason": inst.reason,
        "youden": _num(inst.youden) if acc.estimable else None,
        "youden_bound": _num(inst.bound) if inst.bound is not None else None,
        "margin": margin,
        "p_tost_margin": _num(p_margin) if p_margin is not None else None,
        "corrected_estimate": estimate,
        "corrected_low": corrected[0],
        "corrected_high": corrected[1],
        **_differential_fields(error, ppi, plan),
        "estimand": _estimand_text(plan, ppi),
        "method": METHODS[plan.adjudication.reference(ppi.n_labelled)],
        "rule": "betting",
    }
    return fields | _joint_fields(inst, ppi, plan, error)


def _joint_fields(
    inst: Instrument, ppi: PPIResult, plan: Plan, error: DifferentialError | None
) -> dict[str, object]:
    """Under the joint rule (`statistics.joint`): the gate's score bound, the margin on the
    true scale, the joint TOST and Fieller's (1 - alpha) interval of the true difference."""
    test = joint_test(ppi, plan, inst)
    if test is None or error is None:
        return {}
    ok, reason = inst.joint_gate(plan)
    low, high = test.interval(1 - plan.primary.alpha)
    tost_low, tost_high = test.interval(1 - 2 * plan.primary.alpha)
    j = test.youden.value
    return {
        "rule": "joint",
        "adjudicator_gate": ok,
        "adjudicator_reason": reason,
        "youden": _num(j),
        "youden_bound": _num(test.youden.lower),
        "margin": plan.equivalence.sesoi,
        "p_tost_margin": _num(test.p_tost(plan.equivalence.sesoi)),
        "corrected_estimate": _num(ppi.estimate / j) if j > 0 else None,
        "corrected_low": _num(low),
        "corrected_high": _num(high),
        "corrected_tost_low": _num(tost_low),
        "corrected_tost_high": _num(tost_high),
    } | _robust_fields(error, plan)


def _robust_fields(error: DifferentialError, plan: Plan) -> dict[str, object]:
    """The true difference corrected for the adjudicators' differential error too, Fieller's
    (1 - alpha) interval, and whether the plan makes it the verdict's interval."""
    fixed = error.corrected
    out: dict[str, object] = {"robust_required": plan.adjudication.requires_robust(error.measured)}
    if fixed is not None:
        out |= {
            "robust_estimate": _num(fixed.estimate),
            "robust_low": _num(fixed.low),
            "robust_high": _num(fixed.high),
        }
    return out


def _inverse_youden(acc: Accuracy) -> float:
    """1 / J with the second-order correction the primary reviewers' corrected difference uses
    (`corrected.inverse_youden`): 1 / J-hat over-corrects by about var(J-hat) / J^2."""
    s, p = acc.sensitivity, acc.specificity
    var = s * (1 - s) / acc.published + p * (1 - p) / acc.unpublished
    inverse, _ = inverse_youden(np.array([acc.youden]), np.array([var]))
    return float(inverse[0])


def _differential_fields(
    error: DifferentialError | None, ppi: PPIResult, plan: Plan
) -> dict[str, object]:
    """Only for a significant difference: the tipping point is a `supported`'s figure."""
    if error is None or not ppi.p_greater() < plan.primary.alpha:
        return {}
    return {"differential_error": error.record(), "differential_error_text": error.text()}


_ON_THEIR_SCALE = (
    "of the per-topic difference as the adjudicators judge it (divided by their J, the true "
    "difference when their accuracy does not depend on the condition)"
)
ESTIMANDS = {
    "study_topics": (
        "the mean over the study's own topics of the per-topic difference as these "
        "adjudicators would judge them, their verdicts taken as fixed (not the true difference "
        "divided by J: their own errors on the topics are part of it)"
    ),
    "topic_population": (
        "the mean over topics like the study's (drawn from the bank's domain pairs in the "
        f"bank's proportions) {_ON_THEIR_SCALE}"
    ),
}
METHODS = {
    "t": (
        "PPI++ with a t reference; `refuted` tests the true difference with the adjudicators' J "
        "estimated jointly (harness.analysis.statistics.joint)"
    ),
    "betting": (
        "betting tests of the prediction-powered mean (finite-sample valid for differences in "
        "[-1, 1] at any base rate; harness.analysis.statistics.ppi_betting)"
    ),
    "normal": "PPI++ with a normal reference (ppi-python's; approximate)",
}


def _estimand_text(plan: Plan, ppi: PPIResult) -> str:
    used = estimand_used(plan, ppi.n_labelled, ppi.n_unlabelled)
    text = ESTIMANDS[used]
    if used != plan.adjudication.estimand:
        text += (
            f" (the plan names {plan.adjudication.estimand}, which is used only while at most "
            f"half the topics are adjudicated; here {ppi.n_labelled} of "
            f"{ppi.n_labelled + ppi.n_unlabelled} are)"
        )
    return text


def _degenerate(t: Tiers, ppi: PPIResult, plan: Plan) -> str | None:
    """A scale that cannot show equivalence however narrow its interval looks: adjudicated
    verdicts that never differ within a topic (every d_t = 0, e.g. adjudicators who answer by
    topic), or an interval of (near) zero width."""
    d = t.d[t.labelled]
    if d.size and np.all(d == 0):
        return (
            f"the adjudicators' verdicts never differ within any of the {d.size} adjudicated "
            "topics (every per-topic difference is 0, as when items are judged by their topic "
            "alone), so their scale cannot show that the conditions do not differ"
        )
    if ppi.n_labelled >= 2:
        low, high = ppi.interval(1 - 2 * plan.primary.alpha)
        if math.isfinite(low) and math.isfinite(high) and high - low < 1e-9:
            return (
                "the interval of the adjudicated difference has zero width, which says the "
                "data carry no spread, not that the conditions do not differ"
            )
    return None


def _ceiling(t: Tiers, sesoi: float) -> str | None:
    """Why the adjudicated scale cannot show that the conditions do not differ, if it cannot:
    adjudicators who gave every item one verdict have no spread (their d_t are all 0, and a zero
    standard error would read as equivalence); adjudicators who judge more than 1 - SESOI of the
    single-field items novel leave no room for cross-field items to be judged novel more often
    by the SESOI, so "no difference of interest" is a ceiling, not a finding."""
    table = t.adjudicated
    scores = table.item_score[table.item_eligible]
    if scores.size and np.all(scores == scores[0]):
        word = "novel" if scores[0] == 1.0 else "not novel" if scores[0] == 0.0 else "alike"
        return (
            f"the adjudicators judged every item {word}, so the adjudicated scale has no "
            "spread with which to show that the conditions do not differ"
        )
    single = table.p_single[t.labelled]
    rate = float(np.mean(single)) if single.size else 0.0
    if rate > 1 - sesoi:
        return (
            f"the adjudicators judged {rate:.1%} of single-field items novel, which leaves less "
            f"room than the SESOI ({sesoi:g}) for cross-field items to be judged novel more "
            "often: on this scale no difference is a ceiling, not a refutation"
        )
    return None


def _per_model(
    data: StudyData, plan: Plan
) -> tuple[list[tuple[str, PPIResult]], dict[str, str | None]]:
    """Each model's estimate, and why its own adjudicated scale cannot show "no difference" (a
    model whose adjudicated verdicts never differ within a topic, though the pooled ones do)."""
    j = data.judgments
    if j.item_model is None:
        return [], {}
    models = sorted({str(m) for m in j.item_model[np.unique(j.item)]})
    if len(models) < 2:
        return [], {}
    roles = roles_of(data)
    estimates, ceilings = [], {}
    for m in models:
        t = tiers(j.subset(j.item_model[j.item] == m), roles, data.sampled, plan)
        ppi = t.estimate(plan)
        estimates.append((m, ppi))
        ceilings[m] = _ceiling(t, plan.equivalence.sesoi) or _degenerate(t, ppi, plan)
    return estimates, ceilings


def _model_rows(per_model: list[tuple[str, PPIResult]], plan: Plan) -> list[AdjudicatedModelRow]:

    usable = [p.n_labelled >= 2 for _, p in per_model]
    raw = [p.p_greater() if ok else math.nan for (_, p), ok in zip(per_model, usable, strict=True)]
    holm = holm_adjust(raw) if per_model else np.array([])
    level = 1 - 2 * plan.primary.alpha
    return [
        {
            "model": m,
            "estimate": _num(p.estimate),
            "ci_low": _num(p.interval(level)[0]) if ok else None,
            "ci_high": _num(p.interval(level)[1]) if ok else None,
            "lam": p.lam,
            "topics_labelled": p.n_labelled,
            "p_greater": _num(r),
            "p_holm": _num(float(h)),
            "p_tost": _num(p.p_tost(plan.equivalence.sesoi)) if ok else None,
        }
        for (m, p), ok, r, h in zip(per_model, usable, raw, holm, strict=True)
    ]


def _withheld(t: Tiers, ppi: PPIResult) -> list[str]:
    out = []
    if t.missing:
        out.append(
            f"{len(t.missing)} of {int(t.sampled.sum())} topics drawn for adjudication are "
            f"complete for the primary reviewers but not for the adjudicators (first: "
            f"{t.missing[0]}); leaving them out could bias the estimate, so the verdict waits "
            "for their adjudications (with adjudication.escalate, `harness judge --escalate` "
            "routes the items they disagree on)"
        )
    if ppi.n_labelled < 2:
        out.append(f"only {ppi.n_labelled} adjudicated topic(s): at least 2 are needed")
    return out


def _result(
    data: StudyData,
    plan: Plan,
    t: Tiers,
    ppi: PPIResult,
    coded: pd.DataFrame,
    draw: JsonObject,
) -> AdjudicationResult:
    alpha, level = plan.primary.alpha, plan.controls.level
    ci = ppi.interval(level) if ppi.n_labelled >= 2 else (math.nan, math.nan)
    tost = ppi.interval(1 - 2 * alpha) if ppi.n_labelled >= 2 else (math.nan, math.nan)
    sesoi = plan.equivalence.sesoi
    adjudicators = _adjudicators(data, roles_of(data))
    lab = t.labelled
    return AdjudicationResult(
        estimator=ppi.estimator,
        interval=plan.adjudication.interval,
        combine=plan.adjudication.combine,
        adjudicators=adjudicators,
        automated_adjudicators=any(a["kind"] == "automated" for a in adjudicators),
        topics_sampled=int(t.sampled.sum()),
        topics_labelled=ppi.n_labelled,
        topics_unlabelled=ppi.n_unlabelled,
        missing=t.missing,
        estimate=_num(ppi.estimate),
        se=_num(ppi.se),
        ci_low=_num(ci[0]),
        ci_high=_num(ci[1]),
        ci_level=level,
        tost_low=_num(tost[0]),
        tost_high=_num(tost[1]),
        lam=ppi.lam,
        df=_num(ppi.df),
        p_greater=_p(ppi, ppi.p_greater),
        p_less=_p(ppi, ppi.p_less),
        p_tost=_p(ppi, lambda: ppi.p_tost(sesoi)),
        p_below_sesoi=_p(ppi, lambda: ppi.p_less(sesoi)),
        sesoi=sesoi,
        alpha=alpha,
        classical_estimate=_num(ppi.classical_estimate),
        classical_se=_num(ppi.classical_se),
        effective_topics=_num(ppi.effective_topics),
        mean_f=_num(float(np.nanmean(t.f))) if np.isfinite(t.f).any() else None,
        novel_rate=_novel_rate(t),
        correlation=_correlation(t.d[lab], t.f[lab]),
        accuracy=accuracy_rows(coded, level),
        differential=differential_rows(coded, alpha),
        draw=dict(draw),
    )


def accuracy_rows(coded: pd.DataFrame, level: float) -> list[AccuracyRow]:
    """Per reviewer, per kind and pooled; for both arms together and for each arm."""
    if coded.empty:
        return []
    rows: list[AccuracyRow] = []
    for arm, part in (("both", coded), *coded.groupby("control_kind", sort=True)):
        rows += [{**a.row(), "arm": str(arm)} for a in accuracy_table(part, level)]
    return rows


def differential_rows(coded: pd.DataFrame, alpha: float) -> list[ArmDifference]:
    """Fisher tests of equal sensitivity and specificity between the arms, per reviewer, per
    kind and pooled (judgments counted as independent: a screen, not a verdict)."""
    if coded.empty:
        return []
    groups = [(str(r), "reviewer", g) for r, g in coded.groupby("reviewer_id", sort=True)]
    groups += [(f"all {k} reviewers", "kind", g) for k, g in coded.groupby("reviewer_kind")]
    groups.append(("all reviewers, pooled", "pooled", coded))
    out: list[ArmDifference] = []
    for label, scope, group in groups:
        diff = differential(group, alpha)
        if diff is not None:
            out.append({"label": label, "scope": scope, **_diff_row(diff)})
    return out


def _diff_row(diff: Differential) -> ArmDifference:
    return {
        "sensitivity_cross": _num(diff.sens_cross),
        "sensitivity_single": _num(diff.sens_single),
        "p_sensitivity": diff.p_sensitivity,
        "specificity_cross": _num(diff.spec_cross),
        "specificity_single": _num(diff.spec_single),
        "p_specificity": diff.p_specificity,
        "favours_hypothesis": diff.favours_hypothesis,
    }


def _adjudicators(data: StudyData, roles: np.ndarray) -> list[dict[str, str]]:
    j = data.judgments
    ids = np.asarray(j.reviewer_ids if j.reviewer_ids is not None else [], dtype=object)
    kinds = np.asarray(j.reviewer_kind if j.reviewer_kind is not None else [], dtype=object)
    return [
        {"reviewer_id": str(ids[i]), "kind": str(kinds[i])}
        for i in range(len(ids))
        if roles[i] == ADJUDICATOR
    ]


def _novel_rate(t: Tiers) -> float | None:
    """Share of the adjudicated topics' items the adjudicators judged novel (all arms)."""
    p = t.adjudicated.p[t.labelled]
    return _num(float(np.nanmean(p))) if np.isfinite(p).any() else None


def _correlation(d: np.ndarray, f: np.ndarray) -> float | None:
    if d.size < 3 or np.std(d) == 0 or np.std(f) == 0:
        return None
    return _num(float(np.corrcoef(d, f)[0, 1]))


def _p(ppi: PPIResult, test: Callable[[], float]) -> float | None:
    return _num(test()) if ppi.n_labelled >= 2 else None


def _num(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None
