"""The verdict the plan fixes in advance, and the hypothesis author's literal rule beside it.

With an adjudicated sample the verdict is `decide_adjudicated`'s: prediction-powered tests of the
difference as the adjudicators judge it. Without one, `decide` gives a *provisional* verdict on
the primary reviewers' own scale, gated by their accuracy on the planted controls:

- supported: the one-sided primary test is significant (cross above single), on the observed
  scale: valid whatever the reviewers' accuracy when misclassification does not depend on the
  condition; the differential-accuracy check is reported beside it;
- refuted: only when the reviewers are shown to discriminate (the exact lower bound of the pooled
  J reaches `controls.min_youden`) AND the difference is shown inside the SESOI margin on the
  corrected scale (TOST; or below +SESOI when the plan refutes by non-superiority), or the
  primary test is significant in the other direction. Reviewers who answer everything alike have
  J = 0 and can never refute;
- inconclusive: neither; the report gives the power achieved, and the accuracy, controls and
  topics a decisive study needs;
- no verdict: a pilot study, or one below the minimum topics or reviewers per item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, cast

from harness.analysis.plan.plan_file import Plan
from harness.analysis.statistics.equivalence import Equivalence
from harness.analysis.statistics.instrument import Instrument
from harness.analysis.statistics.joint import JointTest
from harness.analysis.statistics.pooled import Pooled
from harness.analysis.statistics.ppi import Estimator, PPIResult, ppi_mean
from harness.analysis.statistics.ppi_betting import BettingPPI
from harness.analysis.statistics.primary import PrimaryOutcome


@dataclass(frozen=True)
class AccuracyGate:
    """Whether the reviewers were shown to discriminate, and equivalence on the corrected scale."""

    ok: bool
    reason: str
    equivalence: Equivalence | None = None
    needs: str = ""


NO_CONTROLS = AccuracyGate(
    False,
    "no control items were judged, so the reviewers' accuracy "
    "cannot be estimated and they could not be shown to "
    "discriminate published from unpublished work",
)


@dataclass(frozen=True)
class Decision:
    label: Literal["supported", "refuted", "inconclusive", "no verdict"]
    reason: str
    qualifier: str | None = None
    withheld: list[str] = field(default_factory=list)


def withheld_reasons(
    plan: Plan,
    *,
    pilot: bool,
    complete_topics: int,
    items_reviewed: int,
    items_short: int,
    estimable: bool,
) -> list[str]:
    reasons = []
    if pilot:
        reasons.append(
            "this is a pilot study: it exercises the pipeline on too few topics to decide anything"
        )
    if complete_topics < plan.minimum.topics:
        text = (
            f"only {complete_topics} complete topics (a topic counts when each compared arm "
            f"keeps an item with enough reviews); the plan requires {plan.minimum.topics}"
        )
        if items_short:
            text += (
                f"; {items_short} of {items_reviewed} reviewed items have fewer than "
                f"{plan.minimum.reviewers_per_item} reviewers' verdicts and were left out"
            )
        reasons.append(text)
    if not estimable:
        reasons.append("the primary test could not be computed on these data")
    return reasons


def _shown_inside(eq: Equivalence | None, plan: Plan) -> bool:
    if eq is None:
        return False
    return eq.equivalent if plan.equivalence.refute_by == "equivalence" else eq.non_superior


def _inside(corrected: Equivalence, plan: Plan) -> str:
    what = "inside +/-" if plan.equivalence.refute_by == "equivalence" else "below +"
    if corrected.method == "bootstrap":  # per-reviewer correction: the corrected interval itself
        return (
            f"the {1 - 2 * corrected.alpha:.0%} bootstrap interval of the corrected "
            f"difference [{corrected.ci_low:+.3f}, {corrected.ci_high:+.3f}] lies "
            f"{what}{corrected.margin:g}"
        )
    p = corrected.p_tost if plan.equivalence.refute_by == "equivalence" else corrected.p_upper
    return (
        f"the observed differences lie {what}{corrected.margin:.3g} (the SESOI "
        f"{plan.equivalence.sesoi:g} times the lower bound of J), {corrected.method} "
        f"p = {p:.4g} < {corrected.alpha:g}"
    )


def decide(
    primary: PrimaryOutcome,
    equivalence: Equivalence,
    plan: Plan,
    withheld: list[str],
    accuracy: AccuracyGate = NO_CONTROLS,
) -> Decision:
    if withheld:
        return Decision("no verdict", "; ".join(withheld), withheld=withheld)
    alpha = plan.primary.alpha
    margin = plan.equivalence.sesoi
    corrected = accuracy.equivalence
    interval = (
        f"the {1 - 2 * equivalence.alpha:.0%} interval of the difference "
        f"[{equivalence.ci_low:+.3f}, {equivalence.ci_high:+.3f}]"
    )
    if primary.p_greater < alpha:
        qualifier = None
        if equivalence.equivalent:
            qualifier = (
                f"the difference is significant but {interval} lies inside "
                f"+/-{margin:g}: smaller than the smallest effect of interest"
            )
        return Decision(
            "supported",
            (
                f"the one-sided primary test is significant: cross-field prompts were judged novel "
                f"more often (difference {primary.estimate:+.3f}, p = {primary.p_greater:.4g} "
                f"< {alpha:g})"
            ),
            qualifier,
        )
    if not accuracy.ok:
        return Decision(
            "inconclusive",
            (
                f"the primary test is not significant (difference {primary.estimate:+.3f}, one-sided "
                f"p = {primary.p_greater:.4g}) and {accuracy.reason}: without that, no difference "
                "can be read as no effect" + (f". {accuracy.needs}" if accuracy.needs else "")
            ),
        )
    if primary.p_less < alpha:
        return Decision(
            "refuted",
            (
                f"the difference goes significantly the other way: single-field prompts were judged "
                f"novel more often (difference {primary.estimate:+.3f}, one-sided p = "
                f"{primary.p_less:.4g} < {alpha:g})"
            ),
        )
    if corrected is not None and _shown_inside(corrected, plan):
        return Decision(
            "refuted",
            (
                f"no difference of interest on the corrected scale: {_inside(corrected, plan)}; "
                f"{accuracy.reason}; and the primary test is not significant "
                f"(p = {primary.p_greater:.4g})"
            ),
        )
    return Decision(
        "inconclusive",
        (
            f"the primary test is not significant (difference {primary.estimate:+.3f}, one-sided "
            f"p = {primary.p_greater:.4g} >= {alpha:g}) and a difference as large as the SESOI "
            f"({margin:g}) is not excluded on the corrected scale ({accuracy.reason})"
            + (f". {accuracy.needs}" if accuracy.needs else "")
        ),
    )


def literal_rule(pooled: Pooled, plan: Plan, topics: int) -> tuple[str, str]:
    """The author's rule: no significant difference on >= 50 topics means refuted."""
    rule = plan.literal_rule
    if topics < rule.min_topics:
        return "not applicable", (
            f"the rule needs at least {rule.min_topics} topics; the comparison has {topics}"
        )
    significant = pooled.p_value < rule.alpha
    numbers = (
        f"{pooled.p_cross:.3f} vs {pooled.p_single:.3f} of judgments novel, "
        f"{pooled.alternative} p = {pooled.p_value:.4g}"
    )
    if significant and pooled.difference > 0:
        return "supported", f"a significant difference in the predicted direction ({numbers})"
    if significant:
        return "refuted", f"a significant difference against the prediction ({numbers})"
    return "refuted", f"no significant difference on {topics} topics ({numbers})"


def decide_adjudicated(
    ppi: PPIResult,
    plan: Plan,
    withheld: list[str],
    ceiling: str | None = None,
    instrument: Instrument | None = None,
) -> Decision:
    """The verdict on the adjudicated scale (prediction-powered): valid whatever the primary
    reviewers' accuracy, which sets only the power. The adjudicators are the instrument and are
    measured on their own controls (`statistics.instrument`): `supported` is a one-sided test on
    their scale (their errors shrink a difference towards 0, never create one, when they do not
    depend on the condition); `refuted`, from `adjudication.finite_below` adjudicated topics on,
    by the joint test of the true difference (`_refute_jointly`, `statistics.joint`: the gate on
    J's score bound, then TOST of theta - SESOI J at alpha, or theta significantly below 0);
    below it, by the betting rule: J's exact lower bound at least `controls.min_youden` and the
    difference shown inside the SESOI times that bound (alpha / 2 each), or significantly below
    0 (at alpha / 2). `ceiling` says why their scale cannot show "no
    difference" (one verdict for every item, verdicts that never differ within a topic, a
    zero-width interval, or a ceiling of novelty): `refuted` is then out of reach."""
    if withheld:
        return Decision("no verdict", "; ".join(withheld), withheld=withheld)
    alpha, sesoi = plan.primary.alpha, plan.equivalence.sesoi
    numbers = _numbers(ppi, 1 - 2 * alpha)  # the interval a one-sided test at alpha reads
    at_half = _numbers(ppi, 1 - alpha)  # ... and one at alpha / 2, as `refuted`'s tests are
    margin = instrument.margin(sesoi) if instrument is not None else None
    if ppi.p_greater() < alpha:
        return _supported(ppi, plan, numbers, margin, instrument)
    not_significant = f"the one-sided test is not significant (p = {ppi.p_greater():.4g})"
    if ceiling:
        return Decision("inconclusive", f"{not_significant} and {ceiling}")
    test = joint_test(ppi, plan, instrument)
    if test is not None and instrument is not None:
        return _refute_jointly(test, plan, instrument, not_significant)
    if instrument is None or margin is None:
        reason = (
            instrument.reason if instrument is not None else "the adjudicators were not measured"
        )
        return Decision(
            "inconclusive",
            f"{not_significant} and {reason}: without that, no difference on their scale can "
            "be read as no effect",
        )
    by_equivalence = plan.equivalence.refute_by == "equivalence"
    p_inside = _p_inside(ppi, plan, margin)
    below = ppi.p_less() < alpha / 2  # alpha/2: with J's bound at alpha/2, alpha in all
    guard = refute_guard(ppi, plan, instrument) if below or p_inside < alpha / 2 else None
    if guard is not None:
        return Decision("inconclusive", f"{not_significant}; {guard}")
    if below:
        return Decision(
            "refuted",
            f"single-field prompts were judged novel more often ({at_half}; one-sided "
            f"p = {ppi.p_less():.4g} < {alpha / 2:g}); {instrument.reason}",
        )
    what = f"inside +/-{margin:.3g}" if by_equivalence else f"below +{margin:.3g}"
    scaled = f"the SESOI {sesoi:g} times the lower bound of the adjudicators' J"
    if p_inside < alpha / 2:
        return Decision(
            "refuted",
            f"no difference of interest: the difference is shown {what} ({scaled}; {at_half}; "
            f"p = {p_inside:.4g} < {alpha / 2:g}), {instrument.reason}, and {not_significant}",
        )
    return Decision(
        "inconclusive",
        f"{not_significant} and a true difference as large as the SESOI is not excluded: "
        f"{what} ({scaled}) is not shown ({at_half}; p = {p_inside:.4g} >= {alpha / 2:g})",
    )


def _p_inside(ppi: PPIResult, plan: Plan, margin: float) -> float:
    """The betting rule's p of the difference inside (below) the margin on the adjudicated
    scale."""
    if plan.equivalence.refute_by == "equivalence":
        return ppi.p_tost(margin)
    return ppi.p_less(margin)


def joint_test(ppi: PPIResult, plan: Plan, instrument: Instrument | None) -> JointTest | None:
    """The joint test of the true difference where the plan's reference at these adjudicated
    topics is t or normal (`Adjudication.reference`) and the adjudicators' J was estimated;
    None where the betting rule (SESOI x J's exact bound, alpha / 2 each) decides."""
    if plan.adjudication.reference(ppi.n_labelled) == "betting" or ppi.n_labelled < 2:
        return None
    if instrument is None or instrument.estimate is None:
        return None
    return JointTest(ppi, instrument.estimate)


def transfer(test: JointTest, sesoi: float, alpha: float, both: bool) -> str:
    """What the refutation by the true difference assumes: J measured on controls divides it
    (methodology.md, "The verdict's rule in one page", item 7: real items harder than controls
    make it liberal), and how much harder they could be before it would not hold."""
    floor = test.transfer_floor(sesoi, alpha, both)
    j = test.youden.value
    room = (
        f"it holds while their J on real items is at least {floor:.3f} (on their controls "
        f"{j:.3f}: sensitivity and specificity each up to {max(j - floor, 0.0) / 2:.3f} lower "
        "on real items)"
    )
    return (
        "it assumes the adjudicators are about as accurate on real items as on their planted "
        f"controls (their J divides the difference): {room}"
    )


def _refute_jointly(
    test: JointTest, plan: Plan, instrument: Instrument, not_significant: str
) -> Decision:
    """`refuted` when the adjudicators pass the gate on J and the true difference is shown
    inside +/- SESOI (below +SESOI under non-superiority) by the joint test at alpha, or the
    difference is significantly below 0 at alpha; `inconclusive` otherwise."""
    alpha, sesoi, ppi = plan.primary.alpha, plan.equivalence.sesoi, test.ppi
    ok, gate = instrument.joint_gate(plan)
    if not ok:
        return Decision(
            "inconclusive",
            f"{not_significant} and {gate}: without that, no difference on their scale can be "
            "read as no effect",
        )
    low, high = test.interval(1 - 2 * alpha)
    true = (
        f"true difference {ppi.estimate / test.youden.value:+.3f} (the adjudicated "
        f"{ppi.estimate:+.3f} over their J {test.youden.value:.3f}), {1 - 2 * alpha:.0%} "
        f"interval [{low:+.3f}, {high:+.3f}] with J's uncertainty"
    )
    by_equivalence = plan.equivalence.refute_by == "equivalence"
    p_inside = test.p_tost(sesoi) if by_equivalence else test.p_below(sesoi)
    below = ppi.p_less() < alpha
    guard = refute_guard(ppi, plan, instrument) if below or p_inside < alpha else None
    if guard is not None:
        return Decision("inconclusive", f"{not_significant}; {guard}")
    if below:
        return Decision(
            "refuted",
            f"single-field prompts were judged novel more often ({_numbers(ppi, 1 - 2 * alpha)};"
            f" one-sided p = {ppi.p_less():.4g} < {alpha:g}); {gate}",
        )
    what = f"inside +/-{sesoi:g}" if by_equivalence else f"below +{sesoi:g}"
    if p_inside < alpha:
        return Decision(
            "refuted",
            f"no difference of interest: the true difference is shown {what} ({true}; joint "
            f"test p = {p_inside:.4g} < {alpha:g}), {gate}, and {not_significant}",
            transfer(test, sesoi, alpha, by_equivalence),
        )
    return Decision(
        "inconclusive",
        f"{not_significant} and a true difference as large as the SESOI is not excluded: "
        f"{what} is not shown ({true}; joint test p = {p_inside:.4g} >= {alpha:g})",
    )


def refute_guard(ppi: PPIResult, plan: Plan, instrument: Instrument | None) -> str | None:
    """Why a `refuted` is withheld under the adjudicators' differential error, or None. Errors
    that depend on the condition against the hypothesis (cross-field outputs that look
    published, single-field ones that look novel) lower the adjudicated difference without a
    lower true one, so where the plan requires robustness (`adjudication.differential_error`)
    the true difference corrected for the error (`statistics.differential_error`, Fieller) must
    be shown below +SESOI too: its upper limit at one-sided alpha. Both tests must reject, so
    the size is at most the corrected test's, which holds whatever the direction of the error
    (theta - b_x = (pi_x - pi_s) J_s exactly)."""
    if instrument is None or ppi.n_labelled < 2:
        return None
    alpha, sesoi = plan.primary.alpha, plan.equivalence.sesoi
    if isinstance(ppi, BettingPPI):  # its reference is none (df inf): Fieller reads the t one
        ppi = ppi_mean(ppi.d, ppi.f, ppi.f_unlabelled, estimator=cast(Estimator, ppi.estimator))
    error = instrument.differential_error(ppi, plan, 2 * alpha)  # its interval at 1 - 2 alpha
    if not plan.adjudication.requires_robust(error.measured):
        return None
    fixed = error.corrected
    if fixed is not None and fixed.high < sesoi:
        return None
    shown = (
        f"its {fixed.level:.0%} interval [{fixed.low:+.3f}, {fixed.high:+.3f}] reaches +{sesoi:g}"
        if fixed is not None
        else "the controls or the cross-field arm cannot estimate it"
    )
    return (
        "the plan requires a `refuted` to be robust to the adjudicators' differential error "
        f"(adjudication.differential_error: {plan.adjudication.differential_error}), and the "
        f"true difference corrected for it is not shown below +{sesoi:g}: {shown}"
    )


def _numbers(ppi: PPIResult, level: float) -> str:
    low, high = ppi.interval(level)
    return (
        f"difference {ppi.estimate:+.3f} on the adjudicated scale, {level:.0%} interval "
        f"[{low:+.3f}, {high:+.3f}], {ppi.n_labelled} adjudicated and {ppi.n_unlabelled} "
        "primary-only topics"
    )


def _supported(
    ppi: PPIResult, plan: Plan, numbers: str, margin: float | None, instrument: Instrument | None
) -> Decision:
    """`supported`, with how robust it is to the adjudicators' differential error; where the plan
    requires it (`require`, or `auto` with the error measured) one that is not is inconclusive."""
    alpha, sesoi = plan.primary.alpha, plan.equivalence.sesoi
    shown = (
        f"cross-field prompts were judged novel more often ({numbers}; one-sided "
        f"p = {ppi.p_greater():.4g} < {alpha:g})"
    )
    robust = robustness(ppi, plan, instrument)
    if robust.withheld:
        return Decision(
            "inconclusive",
            f"{shown}, but the plan requires the difference to be robust to the adjudicators' "
            "differential error (adjudication.differential_error: "
            f"{plan.adjudication.differential_error}): {robust.said}",
        )
    qualifier = None
    test = joint_test(ppi, plan, instrument)
    small = test.p_tost(sesoi) < alpha if test is not None else None
    if small is None and margin:
        small = ppi.p_tost(margin) < alpha / 2
    if small:
        qualifier = f"the difference is significant but smaller than the SESOI ({sesoi:g})"
    if robust.text is not None:
        qualifier = f"{qualifier}; {robust.text}" if qualifier else robust.text
    return Decision("supported", shown, _differential_note(qualifier, instrument))


@dataclass(frozen=True)
class Robustness:
    """A significant difference against the adjudicators' differential error."""

    text: str | None  # `DifferentialError.text()`; None: the adjudicators were not measured
    withheld: bool  # the plan requires robustness and it is not shown

    @property
    def said(self) -> str:
        return self.text if self.text is not None else "the adjudicators were not measured"


def robustness(
    ppi: PPIResult, plan: Plan, instrument: Instrument | None, alpha: float | None = None
) -> Robustness:
    """For the pooled difference at the plan's alpha, or one of several models' at `alpha`."""
    error = None
    if instrument is not None and ppi.n_labelled >= 2:
        error = instrument.differential_error(ppi, plan, alpha)
    required = plan.adjudication.requires_robust(error is not None and error.measured)
    return Robustness(
        error.text() if error else None, required and not (error is not None and error.robust)
    )


def _differential_note(qualifier: str | None, instrument: Instrument | None) -> str | None:
    """A `supported` whose adjudicators judged cross-field controls differently, in the
    direction that favours the hypothesis: their error could have made the difference."""
    diff = instrument.differential if instrument is not None else None
    if diff is None or not diff.favours_hypothesis:
        return qualifier
    note = (
        "the adjudicators' accuracy differs between cross-field and single-field controls in "
        f"the direction that favours the hypothesis (Fisher p = {_p(diff.p_sensitivity)} for "
        f"sensitivity, {_p(diff.p_specificity)} for specificity): part of the difference may "
        "be theirs"
    )
    return f"{qualifier}; {note}" if qualifier else note


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"
