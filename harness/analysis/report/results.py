"""Results objects of `analyze`: every number the report shows, and a `summary()` to read.

They are plain pydantic models so that `report.json` is their JSON dump (NaN becomes null) and a
notebook user gets attributes and DataFrames rather than text to parse.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Literal, NotRequired, TypedDict, TypeVar

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler
from pydantic_core import core_schema

from harness.study.records import JsonObject

if TYPE_CHECKING:
    import pandas as pd

RULE = "=" * 78
THIN = "-" * 78
Role = Literal["verdict", "primary", "check", "literal", "secondary", "corrected"]
Scale = Literal["difference", "odds ratio", "slope"]


_T = TypeVar("_T")


class _AsMade:
    """Pydantic takes the value as it is and dumps it by its own type, as for `Any`."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: object, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.any_schema()


#: A record the report keeps exactly as the analysis made it: typed for its readers, neither
#: validated nor reshaped by pydantic (a TypedDict field would drop unknown keys and turn an int
#: into a float), and dumped to JSON as a plain dict.
Kept = Annotated[_T, _AsMade]


class AccuracyRow(TypedDict):
    """`statistics.accuracy.Accuracy.row()`: one reviewer's, kind's or the pooled accuracy on
    control items, with exact intervals; `arm` where it is given per arm (cross, single, both)."""

    label: str
    scope: Literal["reviewer", "kind", "pooled", "weighted"]
    kind: str
    published: float  # effective (non-integer) counts for scope "weighted"
    published_correct: float
    unpublished: float
    unpublished_correct: float
    sensitivity: float | None
    sensitivity_low: float | None
    sensitivity_high: float | None
    specificity: float | None
    specificity_low: float | None
    specificity_high: float | None
    youden: float | None
    youden_low: float | None
    youden_high: float | None
    level: float
    arm: NotRequired[str]


class WeightedAccuracyRow(AccuracyRow):
    """The accuracy the verdict uses: reviewers weighted by their share of the real judgments."""

    shares: dict[str, float]
    uncovered: float


class ArmDifference(TypedDict):
    """Fisher tests of equal sensitivity and specificity between the arms (cross, single);
    `label` and `scope` name whose judgments, where there are several rows."""

    label: NotRequired[str]
    scope: NotRequired[str]
    sensitivity_cross: float | None
    sensitivity_single: float | None
    p_sensitivity: float | None
    specificity_cross: float | None
    specificity_single: float | None
    p_specificity: float | None
    favours_hypothesis: bool


class ControlsDifference(TypedDict):
    """The primary reviewers' `ArmDifference` on the controls, with its counts."""

    sensitivity_cross: float | None
    sensitivity_single: float | None
    published_cross: int
    published_single: int
    p_sensitivity: float | None
    specificity_cross: float | None
    specificity_single: float | None
    unpublished_cross: int
    unpublished_single: int
    p_specificity: float | None
    alpha: float
    favours_hypothesis: bool
    test: str


class ModelRow(TypedDict):
    """One model's difference in a study of several (`ModelsResult.models`)."""

    model: str
    topics: int
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    p_greater: float
    p_holm: float
    supported: bool  # Holm-adjusted p < alpha
    p_less: float
    verdict: str  # the per-model rule of harness.analysis.statistics.model_verdict
    verdict_reason: str


class AdjudicatedModelRow(TypedDict):
    """One model's prediction-powered estimate on the adjudicated scale, Holm over models."""

    model: str
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    lam: float
    topics_labelled: int
    p_greater: float | None
    p_holm: float | None
    p_tost: float | None


class ReviewerRow(TypedDict):
    """One reviewer's share of novel verdicts by arm (descriptive)."""

    reviewer_id: str
    kind: str
    judgments: int
    novel_cross: float
    novel_single: float
    difference: float


class TopicRow(TypedDict):
    """One topic: the proportion judged novel per condition, items per condition, and d."""

    topic_id: str
    p_single_a: float
    n_items_single_a: int
    p_single_b: float
    n_items_single_b: int
    p_cross: float
    n_items_cross: int
    p_single: float
    d: float
    complete: bool


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, protected_namespaces=())


class Estimate(_Model):
    """One analysis as a row of the estimates figure and table."""

    name: str
    label: str
    role: Role
    scale: Scale
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None = None
    p_label: str = ""
    p_holm: float | None = None
    n_topics: int | None = None
    note: str = ""
    skipped: str | None = None


class ConsensusCounts(_Model):
    threshold: float
    both: int
    cross_only: int
    single_only: int
    neither: int


class PrimaryResult(_Model):
    test: str
    description: str
    n_topics: int
    mean_cross: float | None
    mean_single: float | None
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float
    p_label: str
    p_less: float
    alpha: float
    sd_d: float | None
    details: dict[str, str | int | float | None] = Field(default_factory=dict)


class EquivalenceResult(_Model):
    method: str
    sesoi: float
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    ci_level: float
    p_lower: float
    p_upper: float
    p_tost: float
    equivalent: bool
    non_superior: bool


class LiteralRuleResult(_Model):
    novel_cross: int
    n_cross: int
    novel_single: int
    n_single: int
    p_cross: float | None
    p_single: float | None
    difference: float | None
    z: float
    p_value: float
    alternative: str
    ci_low: float | None
    ci_high: float | None
    label: str
    reason: str


class PairAgreement(_Model):
    reviewer_a: str
    reviewer_b: str
    n_items: int
    agreement: float | None
    kappa: float | None


class AgreementResult(_Model):
    n_items: int
    raw_agreement: float | None
    fleiss_kappa: float | None
    fleiss_raters: int
    fleiss_items: int
    alpha_verdicts: float | None
    alpha_outcome: float | None
    pairs: list[PairAgreement]


class PowerSummary(_Model):
    basis: str
    n_topics: int
    sd: float | None
    sesoi: float
    alpha: float
    target: float
    power_at_sesoi: float | None
    topics_needed: int | None
    equivalence_power: float | None
    topics_needed_equivalence: int | None
    curve: list[dict[str, float]]
    # the verdict's own rule at this study's design, simulated with what the study measured
    # (`planning.decisive_design.study_power`); None without an adjudicated sample
    verdict_supported: float | None = None  # `supported` at a true +SESOI
    verdict_refuted: float | None = None  # `refuted` at a true 0
    verdict_studies: int = 0
    verdict_design: str = ""  # the design and the assumptions, in words


class DecisiveNeeds(_Model):
    """Accuracy, control judgments and topics a decisive study needs (exact gate power)."""

    sensitivity: float
    specificity: float
    basis: str  # the accuracy observed, or the plan's assumed accuracy
    design_effect: float
    controls: int | None  # None: no number of controls is enough
    topics: int | None
    text: str


class ControlsResult(_Model):
    """Reviewer accuracy on control items and the corrected difference the verdict rests on."""

    available: bool  # any counted control judgment
    n_controls: int
    n_judgments: int
    level: float
    min_youden: float
    correction: str
    accuracy: Kept[list[AccuracyRow]]  # per reviewer, per kind, pooled
    # the accuracy the verdict uses: reviewers weighted by their share of the real judgments,
    # with effective counts, each reviewer's share, and the share without controls of both kinds
    weighted: Kept[WeightedAccuracyRow]
    excluded: list[str]
    exclude_below: float
    pooled_youden: float | None  # the weighted J of `weighted`, and its exact interval
    pooled_youden_low: float | None
    pooled_youden_high: float | None
    gate_ok: bool
    gate_reason: str
    differential: Kept[ControlsDifference | None]
    observed: float | None
    corrected: float | None
    corrected_low: float | None
    corrected_high: float | None
    corrected_level: float  # two-sided level: 1 - alpha
    corrected_note: str
    equivalence: EquivalenceResult | None
    youden_bound: float | None  # J_L that scaled the observed-scale margin
    needs: DecisiveNeeds
    leak_auc: dict[str, float] | None  # controls-vs-real separability from the leak audit
    corrected_unreliable: bool = False  # J-hat too uncertain: plain 1/J-hat (see the note)


class ModelsResult(_Model):
    """Several models in one study: each model's difference, the pooled test, heterogeneity."""

    primary: Literal["pooled", "per_model"] = "pooled"  # the plan's models.primary
    models: Kept[list[ModelRow]]
    topics: int  # topics complete in every model
    pooled_estimate: float | None
    pooled_p_greater: float
    pooled_method: str
    q: float | None  # Cochran's Q (descriptive), its df and I^2
    q_df: int
    i2: float | None
    interaction_f: float | None  # Hotelling T^2 as F: equal differences across models
    interaction_df: list[int] | None
    interaction_p: float | None
    alpha: float
    leak_auc: Kept[JsonObject | None] = None  # how well a classifier tells the models apart
    # "configurations" when every key is a labelled configuration of one model (of_model)
    kind: Literal["models", "configurations"] = "models"
    of_model: str | None = None
    heading: str = "Across models"


class StepFidelityRow(_Model):
    """One blinded step in one condition group (cross, single, control): its fidelity checks."""

    step: str  # extract | normalise
    group: str  # cross | single | control
    items: int  # items the step was recorded on
    checked: int  # of them, with a fidelity check or empty (steps recorded before the check
    # have none)
    failed: int  # failed the check, or wrote nothing
    share_failed: float | None
    mean_support: float | None  # share of the step text's content words found in the output
    low_support: int  # failed for support below the minimum
    added: int  # added a claim of novelty, prior work or an institution
    echoed: int  # repeated its instruction
    empty: int = 0  # wrote nothing (counted in `failed` and `checked`)
    shown_original: int  # shown to reviewers in the original form for this step


class StepFidelityTest(_Model):
    """Cross against single failure rates of one step: Fisher's exact test."""

    step: str
    difference: float  # share failed, cross minus single
    odds_ratio: float | None
    p_value: float


class BlindedStepsResult(_Model):
    """The blinded steps: the model that ran each, and their fidelity per condition."""

    models: dict[str, list[str]]  # step -> backend/model
    rows: list[StepFidelityRow]
    tests: list[StepFidelityTest]
    unchecked: int  # step records made before the fidelity check


class AdjudicationResult(_Model):
    """The prediction-powered test on the adjudicated scale, and accuracy on the real items."""

    estimator: str  # ppi++ | ppi | classical
    interval: str  # betting | t | normal
    combine: str  # how adjudicators' verdicts on an item combine: mean | majority
    adjudicators: list[dict[str, str]]  # reviewer_id, kind
    automated_adjudicators: bool  # any adjudicator is automated
    topics_sampled: int  # drawn (sealed in the blinding key)
    topics_labelled: int  # drawn, complete for both tiers: d_t and f_t
    topics_unlabelled: int  # not drawn, complete for the primary reviewers: f_t only
    missing: list[str]  # drawn topics the primary reviewers completed, the adjudicators not
    estimate: float | None
    se: float | None
    ci_low: float | None  # two-sided, at ci_level
    ci_high: float | None
    ci_level: float
    tost_low: float | None  # the (1 - 2 alpha) interval that the equivalence test reads
    tost_high: float | None
    lam: float  # PPI++'s power-tuning parameter (0: adjudicated topics only)
    df: float | None  # of the t reference (None: normal)
    p_greater: float | None
    p_less: float | None
    p_tost: float | None
    p_below_sesoi: float | None  # non-superiority: H0 theta >= SESOI
    sesoi: float
    alpha: float
    classical_estimate: float | None  # mean d_t over the adjudicated topics alone
    classical_se: float | None
    effective_topics: float | None  # adjudicated topics the classical test would need
    mean_f: float | None  # the primary reviewers' mean difference, all complete topics
    correlation: float | None  # of d_t and f_t on the adjudicated topics
    novel_rate: float | None = None  # adjudicated items judged novel, all arms
    accuracy: Kept[list[AccuracyRow]]  # per reviewer / kind / pooled, with arm
    differential: Kept[list[ArmDifference]]  # per reviewer kind and pooled: cross vs single
    draw: Kept[JsonObject]  # the manifest's record of the draw
    models: Kept[list[AdjudicatedModelRow]] = Field(default_factory=list)  # Holm over models
    # the adjudicators measured on the planted controls of their own packets
    # (`statistics.instrument`): per adjudicator / kind / pooled / weighted, with arm
    adjudicator_accuracy: Kept[list[AccuracyRow]] = Field(default_factory=list)
    adjudicator_differential: Kept[ArmDifference | None] = None  # cross vs single controls
    adjudicator_gate: bool = False  # shown to discriminate: `refuted` is possible
    adjudicator_reason: str = ""
    youden: float | None = None  # the adjudicators' weighted J
    youden_bound: float | None = None  # its lower bound at one-sided alpha / 2
    margin: float | None = None  # SESOI x youden_bound: equivalence margin on their scale
    p_tost_margin: float | None = None  # TOST against that margin (decides at alpha / 2)
    corrected_estimate: float | None = None  # estimate / J (second order): true-scale difference
    corrected_low: float | None = None  # (1 - 2 alpha) interval with J's, Bonferroni
    corrected_high: float | None = None
    # joint rule: Fieller's (1 - 2 alpha) interval, inside +/- SESOI exactly when the joint
    # TOST refutes at alpha
    corrected_tost_low: float | None = None
    corrected_tost_high: float | None = None
    # the true difference corrected for the adjudicators' differential error as well
    # (`statistics.differential_error`, Fieller at 1 - alpha), valid whatever the direction of
    # such error; the verdict's interval where the plan requires robustness (`robust_required`:
    # `adjudication.differential_error` auto with the error measured, or require)
    robust_estimate: float | None = None
    robust_low: float | None = None
    robust_high: float | None = None
    robust_required: bool = False
    tiers_disagree: str = ""  # why the tiers' verdicts do not fit their accuracy (no refuted)
    # the tipping point of a `supported` against the adjudicators' differential error and the
    # bound their per-form controls give (`statistics.differential_error`)
    differential_error: Kept[JsonObject | None] = None
    differential_error_text: str = ""
    estimand: str = ""  # what the interval is an interval of
    method: str = ""  # how the interval and the tests are computed
    # joint: `refuted` by the joint test of the true difference (`statistics.joint`); the bound
    # is then the score bound the gate reads, the margin the SESOI on the true scale and the
    # corrected interval Fieller's at 1 - alpha. betting: SESOI x J's exact bound, alpha / 2 each
    rule: str = ""
    # the topics the verdict's design needs (`analysis.verdict_topics`), at `topics_power`
    topics_to_detect: int | None = None  # a true +SESOI
    topics_for_equivalence: int | None = None  # equivalence when there is no difference
    topics_power: float | None = None
    topics_basis: str = ""


class VerdictResult(_Model):
    label: str
    reason: str
    qualifier: str | None
    withheld: list[str]
    literal_label: str
    literal_reason: str
    # adjudicated: the prediction-powered test; provisional: no adjudicated sample, so the
    # verdict rests on reviewers whose accuracy on the real items is not measured
    basis: Literal["adjudicated", "provisional"] = "provisional"
    basis_note: str = ""


class Verification(_Model):
    blinding_status: Literal["verified", "missing"]
    blinding_recorded: str | None
    blinding_computed: str
    blinding_made_at: str | None
    plan_path: str
    plan_sha256: str
    prereg_plan_sha256: str | None
    prereg_at: str | None
    preregistered: bool
    first_review_at: str | None
    deviations: list[str]


class DesignSummary(_Model):
    topics_in_study: int
    topics_reviewed: int
    complete_topics: int
    prompts: int
    outputs: int
    items: int  # real items made (control items apart)
    items_reviewed: int
    items_eligible: int
    items_short: int
    reviews: int  # of real items, both tiers
    assignments: int  # every assignment: real items of both tiers, and controls
    reviewers: dict[str, int]
    reviews_per_item: dict[str, float]  # the primary reviewers' reviews per real item
    reviews_adjudicator: int = 0  # of `reviews`, by adjudicators
    reviews_controls: int = 0  # of control items (not in `reviews`)
    samples_per_prompt: int
    models: list[str]
    single: str
    unsure: str
    pilot: bool
    demo: bool
    simulated: bool
    reviews_after_unblinding: int = 0  # stored after the unblinding: reported, never analysed


class AnalysisResult(_Model):
    study_dir: str
    study_id: str
    analysed_at: str
    harness_version: str
    plan: Kept[JsonObject]
    design: DesignSummary
    verification: Verification
    primary: PrimaryResult
    consensus: ConsensusCounts
    equivalence: EquivalenceResult
    literal_rule: LiteralRuleResult
    estimates: list[Estimate]
    agreement: AgreementResult
    per_reviewer: Kept[list[ReviewerRow]]
    power: PowerSummary
    verdict: VerdictResult
    controls: ControlsResult | None = None
    models: ModelsResult | None = None
    adjudication: AdjudicationResult | None = None
    blinded_steps: BlindedStepsResult | None = None
    notes: list[str]
    topics: Kept[list[TopicRow]]
    report_files: dict[str, str] = Field(default_factory=dict)

    # -- tables ----------------------------------------------------------------------------------
    def topics_frame(self) -> pd.DataFrame:
        """Per-topic proportions judged novel, by condition, with the paired difference d."""
        import pandas as pd

        return pd.DataFrame(self.topics)

    def estimates_frame(self) -> pd.DataFrame:
        """Every analysis: estimate, interval, p-value (Holm-adjusted for secondary ones)."""
        import pandas as pd

        return pd.DataFrame([e.model_dump() for e in self.estimates])

    def reviewers_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.per_reviewer)

    # -- text ------------------------------------------------------------------------------------
    def headline(self) -> str:
        v = self.verdict
        return f"{verdict_title(v)} - {v.reason}"

    def summary(self) -> str:
        """A fixed-width summary a reader can check number by number against the report."""
        return "\n".join(_summary_lines(self))


def verdict_title(v: VerdictResult) -> str:
    """`VERDICT: LABEL`, marked PROVISIONAL when no adjudicated sample backs it, with what the
    adjudicators were when they were automated."""
    head = "VERDICT" if v.basis == "adjudicated" else "PROVISIONAL VERDICT"
    return f"{head}: {v.label.upper()}" + (f" ({v.basis_note})" if v.basis_note else "")


def verdict_estimate(r: AnalysisResult) -> Estimate | None:
    """The estimate the verdict rests on where it is not the primary reviewers' test: the
    adjudicated (prediction-powered) difference, when the verdict's basis is adjudicated."""
    a = r.adjudication
    if r.verdict.basis != "adjudicated" or a is None or a.estimate is None:
        return None
    level = "" if a.ci_level == 0.95 else f", {a.ci_level:.0%} interval"
    return Estimate(
        name="adjudicated",
        label=f"Adjudicated difference, {a.estimator.upper()} (the verdict's){level}",
        role="verdict",
        scale="difference",
        estimate=a.estimate,
        ci_low=a.ci_low,
        ci_high=a.ci_high,
        p_value=a.p_greater,
        p_label="one-sided",
        n_topics=a.topics_labelled + a.topics_unlabelled,
        note=f"{a.ci_level:.0%} {a.interval} interval",
    )


CHECK_OF_PRIMARY = "(check: primary reviewers' scale)"


def led_estimates(r: AnalysisResult) -> list[Estimate]:
    """Every estimate in the order the report shows them: the verdict's first. When the verdict
    rests on the adjudicated estimate, the primary reviewers' test is a check on their scale."""
    lead = verdict_estimate(r)
    if lead is None:
        return list(r.estimates)
    rest = [
        e.model_copy(
            update={"role": "check", "label": e.label.replace("(primary)", CHECK_OF_PRIMARY)}
        )
        if e.role == "primary"
        else e
        for e in r.estimates
    ]
    return [lead, *rest]


def verdict_basis(r: AnalysisResult) -> str | None:
    """What the verdict rests on, in one sentence, when that is the adjudicated estimate (the
    primary reviewers' test is then a check); None otherwise."""
    lead, a, p = verdict_estimate(r), r.adjudication, r.primary
    if lead is None or a is None:
        return None
    who = "automated" if a.automated_adjudicators else "human"
    return (
        f"the adjudicated difference ({a.estimator.upper()}, {who} adjudicators) "
        f"{fmt(a.estimate, signed=True)}, {a.ci_level:.0%} CI [{fmt(a.ci_low, signed=True)}, "
        f"{fmt(a.ci_high, signed=True)}], one-sided p = {fmt_p(a.p_greater)}; the primary "
        f"reviewers' {p.description} ({fmt(p.estimate, signed=True)} "
        f"[{fmt(p.ci_low, signed=True)}, {fmt(p.ci_high, signed=True)}], p = "
        f"{fmt_p(p.p_value)}) is a check on their own scale"
    )


def fmt(value: float | None, digits: int = 3, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_p(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    if value < 1e-4:
        return f"{value:.1e}"
    return f"{value:.4f}"


def _steps_lines(s: BlindedStepsResult | None) -> list[str]:
    """`Steps:` the model of the blinded steps and their fidelity failures, cross against single."""
    if s is None:
        return []
    models = sorted({m for ms in s.models.values() for m in ms})
    tests = {t.step: t for t in s.tests}
    parts = []
    for step in s.models:
        by = {x.group: x for x in s.rows if x.step == step}
        cross, single = by.get("cross"), by.get("single")
        if cross is None or single is None or step not in tests:
            continue
        parts.append(
            f"{step} failed {fmt(cross.share_failed)} (cross) vs {fmt(single.share_failed)} "
            f"(single), Fisher p = {fmt_p(tests[step].p_value)}"
        )
    lines = [f"Steps:        written by {', '.join(models)} (failing texts shown in original form)"]
    return lines + [f"  {part}" for part in parts]


def _summary_lines(r: AnalysisResult) -> list[str]:
    d, p, v, eq, lit = r.design, r.primary, r.verification, r.equivalence, r.literal_rule
    lines = [RULE, "Cross-field prompt study: preregistered analysis", RULE]
    lines += [f"  NOTE: {note}" for note in r.notes]
    prereg = f"preregistered {v.prereg_at}" if v.preregistered else "NOT preregistered"
    lines += [
        f"Study:        {r.study_dir}",
        f"Plan:         {v.plan_path}",
        f"              sha256 {v.plan_sha256} ({prereg})",
        f"Blinding key: {v.blinding_status}"
        + (f" against commitment {v.blinding_recorded}" if v.blinding_recorded else ""),
        f"Design:       {d.complete_topics} complete topics of {d.topics_in_study}; "
        f"{d.items_eligible} of {d.items} real items analysed; "
        f"{d.reviews - d.reviews_adjudicator} primary"
        + (f" and {d.reviews_adjudicator} adjudicator" if d.reviews_adjudicator else "")
        + f" reviews of real items by {sum(d.reviewers.values())} reviewers"
        + (f"; {d.reviews_controls} reviews of control items" if d.reviews_controls else ""),
        f"Outcome:      not_published = novel; unsure counted as {d.unsure.replace('_', ' ')}; "
        f"single arm = {d.single.replace('_', ' ')}",
        THIN,
        *_lead_lines(r),
        f"  novel after cross {fmt(p.mean_cross)}, after single {fmt(p.mean_single)}; "
        f"difference {fmt(p.estimate, signed=True)} "
        f"95% CI [{fmt(p.ci_low, signed=True)}, {fmt(p.ci_high, signed=True)}]",
        f"  one-sided p ({p.p_label}) = {fmt_p(p.p_value)}   alpha = {p.alpha:g}   "
        f"n = {p.n_topics} topics",
        f"Equivalence:  TOST ({eq.method}), SESOI {eq.sesoi:g}: {eq.ci_level:.0%} CI "
        f"[{fmt(eq.ci_low, signed=True)}, {fmt(eq.ci_high, signed=True)}], "
        f"p = {fmt_p(eq.p_tost)} -> {'shown' if eq.equivalent else 'not shown'}",
    ]
    lines += _controls_lines(r.controls)
    lines += ["Checks:"]
    for e in r.estimates:
        if e.role == "check":
            lines.append(f"  {e.label[:44]:<44} {_est(e)}  p = {fmt_p(e.p_value)}")
    lines += [
        f"Literal rule: pooled z-test (ignores pairing): {fmt(lit.p_cross)} vs "
        f"{fmt(lit.p_single)}, {lit.alternative} p = {fmt_p(lit.p_value)} -> {lit.label}",
    ]
    lines += _adjudication_lines(r.adjudication)
    lines += _steps_lines(r.blinded_steps)
    lines += [
        THIN,
        verdict_title(r.verdict),
        f"  {r.verdict.reason}",
    ]
    basis = verdict_basis(r)
    if basis:
        lines.append(f"  Rests on {basis}")
    if r.verdict.qualifier:
        lines.append(f"  Note: {r.verdict.qualifier}")
    pw, a = r.power, r.adjudication
    if a is not None and a.topics_to_detect is not None and r.verdict.basis == "adjudicated":
        lines.append(
            f"  Topics the verdict's design needs ({a.topics_power:.0%} power): about "
            f"{a.topics_to_detect} to detect +{a.sesoi:g}, {a.topics_for_equivalence} to show "
            "equivalence (section Power)"
        )
    elif pw.power_at_sesoi is not None:
        lines.append(
            f"  Power at the SESOI with {pw.n_topics} topics (paired t-test on the primary "
            f"reviewers' scale, as if they were perfect): {fmt(pw.power_at_sesoi, 2)};"
            f" topics needed for {pw.target:.0%}: {pw.topics_needed}"
        )
    lines.append(RULE)
    return lines


def _lead_lines(r: AnalysisResult) -> list[str]:
    """The verdict's estimate first: the adjudicated one when the verdict rests on it, the
    primary reviewers' test then labelled as a check."""
    p, a = r.primary, r.adjudication
    if verdict_estimate(r) is None or a is None:
        return [f"Primary:      {p.description}"]
    return [
        f"Verdict's:    adjudicated difference ({a.estimator.upper()}) "
        f"{fmt(a.estimate, signed=True)} {a.ci_level:.0%} CI [{fmt(a.ci_low, signed=True)}, "
        f"{fmt(a.ci_high, signed=True)}]; one-sided p = {fmt_p(a.p_greater)}",
        f"Check:        {p.description}, on the primary reviewers' scale",
    ]


def _adjudication_lines(a: AdjudicationResult | None) -> list[str]:
    if a is None:
        return ["Adjudicated:  no adjudication sample: the verdict is provisional"]
    who = "automated" if a.automated_adjudicators else "human"
    lines = [
        f"Adjudicated:  {a.estimator.upper()} ({who} adjudicators, {a.topics_labelled} of "
        f"{a.topics_sampled} drawn topics + {a.topics_unlabelled} primary-only topics), "
        f"lambda {a.lam:.2f}",
        f"  difference {fmt(a.estimate, signed=True)} {a.ci_level:.0%} CI "
        f"[{fmt(a.ci_low, signed=True)}, {fmt(a.ci_high, signed=True)}]; one-sided p = "
        f"{fmt_p(a.p_greater)}; TOST +/-{a.sesoi:g} p = {fmt_p(a.p_tost)}",
    ]
    if a.missing:
        lines.append(f"  {len(a.missing)} drawn topic(s) lack adjudication: the verdict waits")
    return lines


def _controls_lines(c: ControlsResult | None) -> list[str]:
    if c is None:
        return []
    lines = [f"Accuracy:     {c.gate_reason}"]
    if c.excluded:
        lines.append(f"  left out (J below {c.exclude_below:g}): {', '.join(c.excluded)}")
    if c.corrected is not None:
        low = fmt(c.corrected_low, signed=True) if c.corrected_low is not None else "-inf"
        high = fmt(c.corrected_high, signed=True) if c.corrected_high is not None else "+inf"
        lines.append(
            f"  corrected difference {fmt(c.corrected, signed=True)} "
            f"{c.corrected_level:.0%} CI "
            f"[{low}, {high}] (observed {fmt(c.observed, signed=True)}, "
            f"{c.correction.replace('_', ' ')} correction)"
        )
    elif c.available:
        lines.append(f"  corrected difference not estimable: {c.corrected_note}")
    if c.differential and c.differential.get("favours_hypothesis"):
        lines.append(
            "  WARNING: accuracy differs between cross-field and single-field controls "
            "in the direction that favours the hypothesis"
        )
    return lines


def _est(e: Estimate) -> str:
    if e.skipped:
        return f"skipped: {e.skipped}"
    return (
        f"{fmt(e.estimate, signed=e.scale == 'difference')} "
        f"[{fmt(e.ci_low, signed=e.scale == 'difference')}, "
        f"{fmt(e.ci_high, signed=e.scale == 'difference')}]"
    )
