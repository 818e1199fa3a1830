"""The preregistered analysis plan: a pydantic model of `analysis/plan.yaml` and its loader.

Validation errors name the file, the line and the dotted field, so a researcher editing the plan
sees exactly what to fix. The model's defaults equal the bundled plan, so a plan may state only
what it changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from harness.analysis.plan.primary_tests import default_checks, primary_test_names
from harness.defaults import MIN_TOPICS, materials_dir
from harness.errors import HarnessError
from harness.materials.yaml_file import read_yaml_mapping, spelling_message

PLAN_NAME = "plan.yaml"

SecondaryAnalysis = Literal[
    "mixed_glm",
    "conditional_logit",
    "reviewer_kind",
    "unsure_novel",
    "unsure_excluded",
    "field_distance",
    "geometry",
]
SECONDARY_ANALYSES: tuple[SecondaryAnalysis, ...] = get_args(SecondaryAnalysis)


def _registered_test(name: str) -> str:
    """A primary test is valid when registered (`plan.primary_tests`)."""
    known = [repr(k) for k in primary_test_names()]
    if repr(name) not in known:  # worded as pydantic words a Literal's error
        listed = " or ".join([", ".join(known[:-1]), known[-1]] if len(known) > 1 else known)
        raise ValueError(f"Input should be {listed}")
    return name


#: a registered primary test's name (`plan.primary_tests`)
PrimaryTest = Annotated[str, AfterValidator(_registered_test)]


class _Section(BaseModel):
    # fields may start with "model_" (planning.model_correlation): pydantic before 2.10 warns
    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=())


class Outcome(_Section):
    unsure: Literal["not_novel", "novel", "exclude"] = "not_novel"
    #: an automated reviewer whose share of `unsure` reviews passes this is stopped by
    #: `judge --auto` and its work discarded, unless accepted (`--accept-unsure ID`)
    max_unsure_share: float = Field(0.5, ge=0.0, le=1.0)


class Primary(_Section):
    test: PrimaryTest = "permutation"
    alternative: Literal["greater"] = "greater"
    alpha: float = Field(0.05, gt=0.0, lt=0.5)
    p_value: Literal["mid", "conventional"] = "mid"
    permutations: int = Field(20000, ge=1000, le=10_000_000)
    seed: int = 20261202


class Equivalence(_Section):
    sesoi: float = Field(0.10, gt=0.0, lt=1.0)
    method: Literal["betting", "paired_t", "tango"] = "betting"
    refute_by: Literal["equivalence", "non_superiority"] = "equivalence"


class Minimum(_Section):
    topics: int = Field(MIN_TOPICS, ge=1)
    reviewers_per_item: int = Field(2, ge=1)


class Consensus(_Section):
    threshold: float = Field(0.5, ge=0.0, lt=1.0)


class LiteralRule(_Section):
    alternative: Literal["two-sided", "larger"] = "two-sided"
    alpha: float = Field(0.05, gt=0.0, lt=0.5)
    min_topics: int = Field(MIN_TOPICS, ge=1)


class Secondary(_Section):
    analyses: list[SecondaryAnalysis] = Field(default_factory=lambda: list(SECONDARY_ANALYSES))
    correction: Literal["holm", "none"] = "holm"
    alpha: float = Field(0.05, gt=0.0, lt=0.5)
    heavy_max_topics: int = Field(2000, ge=10)
    mixed_max_topics: int = Field(300, ge=10)
    seed: int = 20261202


class Agreement(_Section):
    min_shared_items: int = Field(5, ge=2)


class Design(_Section):
    """Full-design simulation parameters (latent logit scale)."""

    samples: int = Field(1, ge=1, le=100)
    reviewers: int = Field(3, ge=1, le=100)
    sd_topic: float = Field(1.0, ge=0.0)
    sd_topic_condition: float = Field(0.5, ge=0.0)
    sd_sample: float = Field(0.5, ge=0.0)
    sd_reviewer: float = Field(0.5, ge=0.0)
    sd_noise: float = Field(0.5, ge=0.0)
    unsure_rate: float = Field(0.05, ge=0.0, lt=1.0)


class Planning(_Section):
    topics: int = Field(MIN_TOPICS, ge=2)
    p_single: float = Field(0.30, gt=0.0, lt=1.0)
    effect: float = Field(0.10, gt=-1.0, lt=1.0)
    rho: float = Field(0.30, gt=-1.0, lt=1.0)
    power: float = Field(0.80, gt=0.0, lt=1.0)
    simulations: int = Field(1000, ge=10)
    design: Design = Field(default_factory=Design)
    sensitivity: float = Field(0.9, gt=0.0, le=1.0)  # expected reviewer accuracy on controls
    specificity: float = Field(0.9, gt=0.0, le=1.0)
    controls: int = Field(100, ge=0)  # control judgments in the study (pooled)
    models: int = Field(1, ge=1, le=100)  # models answering the same prompts
    model_correlation: float = Field(0.5, ge=0.0, le=1.0)  # of a topic's d_t between two models
    # of two adjudicators' calls on one control (controls that differ in difficulty; 0: alike)
    control_correlation: float = Field(0.0, ge=0.0, lt=1.0)


class Controls(_Section):
    """Control items (known answers) and how reviewer accuracy enters the verdict."""

    share: float = Field(0.2, ge=0.0, le=1.0)
    # adjudicators' controls as a share of their real items (None: `share`, so that a plan
    # written before the key existed keeps its meaning; the bundled plan says 0.4)
    adjudicator_share: float | None = Field(None, ge=0.0, le=2.0)
    min_per_reviewer: int = Field(10, ge=0)
    calibration_share: float = Field(0.5, ge=0.0, lt=1.0)
    exclude_reviewer_below: float = Field(0.0, ge=-1.0, le=1.0)
    min_youden: float = Field(0.3, gt=0.0, le=1.0)
    level: float = Field(0.95, gt=0.5, lt=1.0)
    correction: Literal["pooled", "per_reviewer"] = "pooled"
    bootstrap: int = Field(2000, ge=200, le=1_000_000)
    seed: int = 20261202
    max_leak_auc: float = Field(0.6, gt=0.5, le=1.0)

    @property
    def adjudicators(self) -> float:
        """The adjudicators' share of controls per real item."""
        return self.share if self.adjudicator_share is None else self.adjudicator_share


class Adjudication(_Section):
    """The gold subsample: topics whose every item careful reviewers (adjudicators) judge."""

    topics: float | int = 0.25
    stratify: Literal["domain_pair", "none"] = "domain_pair"
    per_item: int = Field(2, ge=2)
    combine: Literal["mean", "majority"] = "mean"
    estimator: Literal["ppi++", "ppi", "classical"] = "ppi++"
    # auto: the t reference (PPI++, with J estimated jointly: `statistics.joint`) from
    # `finite_below` adjudicated topics on, betting tests below (`statistics.ppi_betting`)
    interval: Literal["auto", "betting", "t", "normal"] = "auto"
    finite_below: int = Field(12, ge=2)
    estimand: Literal["study_topics", "topic_population"] = "topic_population"
    # require: a `supported` that is not robust to the adjudicators' differential error is
    # inconclusive; report: it stays `supported` and says whether it is robust; auto: require
    # where the adjudicators' controls measure the error (both forms, published and
    # unpublished: fixed when `judge --blind` plants them), report where they cannot
    # (`statistics.differential_error`)
    differential_error: Literal["auto", "report", "require"] = "auto"

    def requires_robust(self, measured: bool) -> bool:
        """Must a `supported` be robust to differential error, where the controls do (not)
        measure it?"""
        mode = self.differential_error
        return mode == "require" or (mode == "auto" and measured)

    # with combine: majority, route per_item // 2 + 1 adjudicators first and more only where
    # theirs disagree (`harness judge --escalate`): the labels of per_item for fewer judgments
    escalate: bool = False
    seed: int = 20261202

    @field_validator("topics", mode="before")
    @classmethod
    def _share_or_count(cls, value: object) -> float | int:
        # YAML `1` is a count and `1.0` a share: the type the researcher wrote decides
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("a share (0 < x <= 1, e.g. 0.25) or a count (an integer >= 2)")
        if isinstance(value, int) and value != 0 and value < 2:
            raise ValueError("a count of topics must be at least 2 (0 disables adjudication)")
        if isinstance(value, float) and not 0.0 <= value <= 1.0:
            raise ValueError("a share of topics must be in (0, 1] (0 disables adjudication)")
        return value

    @model_validator(mode="after")
    def _majority_needs_odd(self) -> Adjudication:
        if self.combine == "majority" and (self.per_item < 3 or self.per_item % 2 == 0):
            raise ValueError("combine: majority needs an odd per_item of at least 3")
        if self.escalate and self.combine != "majority":
            raise ValueError("escalate: true needs combine: majority (a third settles a tie)")
        return self

    @property
    def first_round(self) -> int:
        """Adjudicators per item at `judge --blind`: all of them, or with `escalate` the fewest
        whose agreement settles the majority."""
        return self.per_item // 2 + 1 if self.escalate else self.per_item

    @property
    def enabled(self) -> bool:
        return self.topics != 0

    def reference(self, labelled: int) -> Literal["betting", "t", "normal"]:
        """The interval's method at `labelled` adjudicated topics, a number the draw fixes
        before any review: with `auto`, betting below `finite_below`, else t."""
        if self.interval != "auto":
            return self.interval
        return "betting" if labelled < self.finite_below else "t"

    def size(self, n_topics: int) -> int:
        """Topics to draw among `n_topics`: the share rounded to nearest (or the count), at
        least 2 and at most n_topics; 0 when adjudication is disabled or there are no topics."""
        if not self.enabled or n_topics <= 0:
            return 0
        wanted = self.topics if isinstance(self.topics, int) else round(self.topics * n_topics)
        return min(n_topics, max(2, int(wanted)))


class Models(_Section):
    """How several models of one study enter the primary analysis (one model: ignored)."""

    primary: Literal["pooled", "per_model"] = "pooled"


class Report(_Section):
    figure_dpi: int = Field(110, ge=50, le=400)


class Plan(_Section):
    """The whole plan. Field meanings are documented in the bundled `analysis/plan.yaml`."""

    version: Literal[1] = 1
    hypothesis: str = Field(min_length=20)
    outcome: Outcome = Field(default_factory=Outcome)
    single: Literal["mean_of_singles", "single_a", "single_b"] = "mean_of_singles"
    primary: Primary = Field(default_factory=Primary)
    equivalence: Equivalence = Field(default_factory=Equivalence)
    minimum: Minimum = Field(default_factory=Minimum)
    consensus: Consensus = Field(default_factory=Consensus)
    checks: list[PrimaryTest] = Field(default_factory=default_checks)
    literal_rule: LiteralRule = Field(default_factory=LiteralRule)
    secondary: Secondary = Field(default_factory=Secondary)
    agreement: Agreement = Field(default_factory=Agreement)
    planning: Planning = Field(default_factory=Planning)
    controls: Controls = Field(default_factory=Controls)
    adjudication: Adjudication = Field(default_factory=Adjudication)
    models: Models = Field(default_factory=Models)
    report: Report = Field(default_factory=Report)

    @field_validator("hypothesis")
    @classmethod
    def _strip(cls, value: str) -> str:
        return " ".join(value.split())

    @property
    def check_tests(self) -> list[str]:
        """Checks to run: those listed, minus the primary test (which always runs)."""
        return [c for c in dict.fromkeys(self.checks) if c != self.primary.test]


class LoadedPlan(BaseModel):
    """A plan together with where it came from and the SHA-256 of its bytes."""

    model_config = ConfigDict(frozen=True, protected_namespaces=())

    plan: Plan
    path: str
    sha256: str
    text: str


def bundled_plan_path() -> Path:
    return materials_dir("analysis") / PLAN_NAME


def load_plan(path: str | Path | None = None) -> LoadedPlan:
    """Read and validate a plan file (None = the bundled plan); errors name file, line, field."""
    file = read_yaml_mapping(path if path is not None else bundled_plan_path(), "analysis plan")
    plan = file.validate(Plan, spelling_message("the bundled analysis/plan.yaml"))
    problem = _cross_field_problem(plan)
    if problem is not None:
        raise HarnessError(
            problem, file=file.path, row=file.line("models", "primary"), column="models.primary"
        )
    return LoadedPlan(plan=plan, path=str(file.path.resolve()), sha256=file.sha256, text=file.text)


def _cross_field_problem(plan: Plan) -> str | None:
    """Per-model refutation scales each model's margin by the pooled J's lower bound and tests
    that model's own d_t, which needs a pooled correction and a test on d_t."""
    if plan.models.primary != "per_model":
        return None
    if plan.controls.correction != "pooled":
        return "models.primary per_model needs controls.correction: pooled"
    if plan.equivalence.method == "tango":
        return "models.primary per_model needs equivalence.method betting or paired_t"
    return None
