"""The verdict's power at one adjudicated design, by simulating whole studies through the rule the
plan runs (`simulation.instrument`): what `harness power --adjudicated`, the design search
(`planning.decisive_design`), `prereg` and `judge --blind` all read.

A design (`Candidate`) is the topics, the share adjudicated, outputs per prompt (all models
together, each an independent output: several models' correlation is not modelled, which makes
their figures optimistic), the adjudicators per item and how they combine (mean, majority,
escalated majority), and their controls. The assumptions (`Assumptions`) are the plan's: its rule
(`adjudication.interval`, `finite_below`, `estimand`, `controls.level` and `min_youden`,
`differential_error`), its controls per adjudicator (`controls.adjudicator_share` of the items
each judges in the first round, at least `controls.min_per_reviewer`, each control judged by
the adjudicators of the first round, `planning.control_correlation` the correlation of two calls
on one control: controls that differ in difficulty), the correlation of a topic's outputs
(`planning.rho`, as the spread of topics on the logit scale), and the reviewers' accuracy on
real items and controls alike (the primary reviewers' given, the adjudicators'
ADJUDICATOR_ACCURACY).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Self

from harness.analysis.plan.plan_file import Plan
from harness.analysis.simulation.instrument import (
    Batch,
    Decisions,
    Scenario,
    joint_rule,
    measured_rule,
    simulate,
)
from harness.study.records import JsonObject

__all__ = [
    "ADJUDICATOR_ACCURACY",
    "Assumptions",
    "Candidate",
    "GoldPowerSettings",
    "assumptions",
    "design_power",
    "escalated_judgments",
    "sd_for_rho",
]

ADJUDICATOR_ACCURACY = 0.95  # careful reviewers with thorough searches
SEED = 20261207


@dataclass(frozen=True)
class GoldPowerSettings:
    """One study shape of the adjudicated design (`harness power` builds it from the plan and the
    flags)."""

    topics: int
    p_single: float
    rho: float
    sesoi: float
    alpha: float
    target: float
    reviewers: int  # primary reviewers per item
    adjudicators: int = 2  # careful reviewers per sampled item
    adjudicator_accuracy: float = ADJUDICATOR_ACCURACY
    samples: int = 1  # outputs per prompt (of every model)
    singles: int = 2  # 2: cross against the mean of both singles, 1: against single_a

    def record(self) -> JsonObject:
        """The settings as plain numbers (JSON), every field named."""
        return asdict(self)

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Self:
        """The settings a `record()` holds."""
        values = {}
        for key, kind in cls.__annotations__.items():
            value = record[key]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{key}: a number, not {value!r}")
            values[key] = int(value) if kind == "int" else float(value)
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Assumptions:
    """The plan's rule and the reviewers' accuracy the simulation assumes."""

    primary_accuracy: float  # sensitivity = specificity of the primary reviewers on real items
    min_youden: float = 0.3
    require_robust: bool = False  # adjudication.differential_error: require
    interval: str = "auto"
    finite_below: int = 12
    estimand: str = "topic_population"
    level: float = 0.95  # controls.level: the gate's score bound
    control_share: float = 0.4
    min_controls: int = 10
    sd_topic: float = 1.0  # spread of topics' novelty on the logit scale
    control_correlation: float = 0.0  # of two adjudicators' calls on one control


def assumptions(plan: Plan, primary_accuracy: float) -> Assumptions:
    """The plan's rule and controls, with the primary reviewers at `primary_accuracy`."""
    a, c = plan.adjudication, plan.controls
    return Assumptions(
        primary_accuracy,
        min_youden=c.min_youden,
        # auto requires it wherever the controls measure it, as the simulated ones all do
        require_robust=a.differential_error in ("auto", "require"),
        interval=a.interval,
        finite_below=a.finite_below,
        estimand=a.estimand,
        level=c.level,
        control_share=c.adjudicators,
        min_controls=c.min_per_reviewer,
        sd_topic=sd_for_rho(plan.planning.p_single, plan.planning.rho),
        control_correlation=plan.planning.control_correlation,
    )


def sd_for_rho(base: float, rho: float) -> float:
    """The spread of topics on the logit scale that makes two outputs of one topic correlate
    `rho` (var of the topic's rate over base (1 - base)), by Gauss-Hermite and bisection."""
    import numpy as np
    from scipy import optimize, special

    if rho <= 0:
        return 0.0
    nodes, weights = np.polynomial.hermite_e.hermegauss(64)
    weights = weights / weights.sum()

    def excess(sd: float) -> float:
        p = special.expit(special.logit(base) + sd * nodes)
        mean = float((weights * p).sum())
        return float((weights * (p - mean) ** 2).sum()) / (mean * (1 - mean)) - rho

    if excess(20.0) < 0:
        return 20.0
    return float(optimize.brentq(excess, 0.0, 20.0, xtol=1e-4))


@dataclass(frozen=True)
class Candidate:
    topics: int
    share: float
    samples: int  # outputs per prompt (all models together)
    adjudicators: int = 2  # per adjudicated item
    majority: bool = False  # their majority (else their mean)
    escalate: bool = False  # a majority routed to the fewest first (`judge --escalate`)
    control_factor: int = 1  # controls per adjudicator: the planned number times this

    def adjudicated_topics(self) -> int:
        return min(self.topics, max(2, round(self.share * self.topics)))

    @property
    def first_round(self) -> int:
        """Adjudicators per item at `judge --blind` (with escalation, the fewest that settle)."""
        return self.adjudicators // 2 + 1 if self.escalate else self.adjudicators

    def controls(self, a: Assumptions) -> int:
        """Per adjudicator: `control_share` of the items each judges in the first round (as
        `judge --blind` plans them), at least `min_controls`, times `control_factor`."""
        items = self.adjudicated_topics() * 3 * self.samples * self.first_round / self.adjudicators
        return max(a.min_controls, round(a.control_share * items)) * self.control_factor

    def careful(self, a: Assumptions, accuracy: float) -> int:
        """Careful judgments: the adjudicated items' (expected, with escalation) and the
        adjudicators' controls."""
        per_item = (
            escalated_judgments(accuracy, self.adjudicators)
            if self.escalate
            else float(self.adjudicators)
        )
        items = self.adjudicated_topics() * 3 * self.samples
        return round(items * per_item + self.controls(a) * self.adjudicators)

    def scenario(self, s: GoldPowerSettings, a: Assumptions) -> Scenario:
        return Scenario(
            "design",
            topics=self.topics,
            share=self.share,
            base=s.p_single,
            sd_topic=a.sd_topic,
            samples=self.samples,
            primary=s.reviewers,
            primary_accuracy=a.primary_accuracy,
            adjudicators=self.adjudicators,
            combine="majority" if self.majority else "mean",
            sensitivity=s.adjudicator_accuracy,
            specificity=s.adjudicator_accuracy,
            controls=self.controls(a),
            control_correlation=a.control_correlation,
            per_control=self.first_round,
        )

    def words(self, a: Assumptions) -> str:
        panel = (
            f"a majority of {self.adjudicators}{' (escalated)' if self.escalate else ''}"
            if self.majority
            else f"{self.adjudicators} adjudicators (mean)"
        )
        return (
            f"{self.topics} topics, {self.adjudicated_topics()} adjudicated ({self.share:.0%}), "
            f"{self.samples} output(s) per prompt, {panel}, {self.controls(a)} controls "
            "per adjudicator"
        )


def decide(b: Batch, s: GoldPowerSettings, a: Assumptions) -> Decisions:
    """The plan's rule on a simulated batch: betting below `finite_below` adjudicated topics
    (or always with `interval: betting`), the joint test otherwise."""
    betting = a.interval == "betting" or (a.interval == "auto" and b.d.shape[1] < a.finite_below)
    if betting:
        return measured_rule(b, s.alpha, s.sesoi, a.min_youden, estimand=a.estimand)
    return joint_rule(b, s.alpha, s.sesoi, a.min_youden, a.level)


def design_power(
    s: GoldPowerSettings, c: Candidate, a: Assumptions, studies: int, seed: int = SEED
) -> tuple[float, float]:
    """Simulated power of the verdict's rule: (supported at +SESOI, refuted at 0); under
    `require_robust` a verdict counts only when robust to differential error."""
    import numpy as np

    scenario = c.scenario(s, a)
    rng = np.random.default_rng(seed)
    out = []
    for effect, column in ((s.sesoi, "supported"), (0.0, "refuted")):
        decided = decide(simulate(scenario, effect, studies, rng), s, a)
        robust = decided.robust if column == "supported" else decided.refuted_robust
        hits = robust if a.require_robust and robust is not None else getattr(decided, column)
        out.append(float(hits.mean()))
    return out[0], out[1]


def escalated_judgments(accuracy: float, k: int) -> float:
    """Expected adjudicator judgments per item with `adjudication.escalate`: k // 2 + 1 first,
    then each round as many as the majority of k still needs, every verdict right with
    probability `accuracy` (2 + 2a(1 - a) for three)."""
    majority = k // 2 + 1
    states = {
        (r, majority - r): math.comb(majority, r) * accuracy**r * (1 - accuracy) ** (majority - r)
        for r in range(majority + 1)
    }
    expected = float(majority)
    while states:
        after: dict[tuple[int, int], float] = {}
        for (right, wrong), p in states.items():
            need = min(majority - max(right, wrong), k - right - wrong)
            if need <= 0:
                continue
            expected += p * need
            for x in range(need + 1):
                key = (right + x, wrong + need - x)
                odds = math.comb(need, x) * accuracy**x * (1 - accuracy) ** (need - x)
                after[key] = after.get(key, 0.0) + p * odds
        states = after
    return expected
