"""The cheapest design whose verdict decides, found by simulating the verdict's own rule.

A design is the share of topics adjudicated, outputs per prompt, the adjudicators' panel (two
whose mean is taken, or a majority of three routed by escalation: two first, a third only where
they disagree), and controls per adjudicator (as `judge --blind` plans them, or two or four
times that). Its cost is in careful judgments: adjudicated topics x 3 prompts x outputs x adjudicator
judgments per item, plus every adjudicator's controls. Candidates are simulated in order of
cost (`simulation.instrument`, the rule of `adjudication.interval: auto`), and the first whose
`supported` at a true +SESOI (supported and robust to differential error under
`adjudication.differential_error: require`) and `refuted` at a true 0 both reach the target
power is checked
again on fresh studies (`confirm`); a design that passes only by Monte Carlo luck does not
stand. When none at the study's topics decides, topics grow in steps of a quarter (every topic
adjudicated) until one does, up to `MAX_GROWTH` times the study's: the report then says the
topics are too few and how many would do.

Escalation does not change what the verdict sees (a third adjudicator only breaks a tie of two,
so the majority's label is the same), only its cost: `escalated_judgments`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass

from harness.analysis.plan.plan_file import Plan
from harness.analysis.planning.gold_power import (
    FINITE_BELOW,
    GoldPower,
    GoldPowerSettings,
    escalated_judgments,
)
from harness.analysis.simulation.instrument import Scenario, auto_rule, simulate
from harness.study.records import JsonObject

__all__ = [
    "Assumptions",
    "Candidate",
    "Decisive",
    "decisive_design",
    "decisive_lines",
    "design_note",
    "design_power",
    "search_design",
    "study_power",
    "study_power_lines",
]

SHARES = (0.25, 0.5, 0.75, 1.0)
SAMPLES = (1, 2, 3)
CONTROL_FACTORS = (1, 2, 4)
SCREEN = 200  # simulated studies per effect when screening a candidate (MC SE 2.8% at 80%)
SLACK = 0.05  # a screen this close to the target goes on to be confirmed
CONFIRM = 1000  # ... when confirming it (MC SE 1.3% at 80%)
MAX_GROWTH = 8  # topics searched up to this many times the study's
SEED = 20261207


@dataclass(frozen=True)
class Candidate:
    topics: int
    share: float
    samples: int  # outputs per prompt (all models together)
    adjudicators: int = 2  # per adjudicated item
    majority: bool = False  # their majority (else their mean)
    escalate: bool = False  # a majority routed to the fewest first (`judge --escalate`)
    control_factor: int = 1  # controls per adjudicator: the planned number times this

    def scenario(self, s: GoldPowerSettings, primary_accuracy: float) -> Scenario:
        return Scenario(
            "design",
            topics=self.topics,
            share=self.share,
            base=s.p_single,
            samples=self.samples,
            primary=s.reviewers,
            primary_accuracy=primary_accuracy,
            adjudicators=self.adjudicators,
            combine="majority" if self.majority else "mean",
            sensitivity=s.adjudicator_accuracy,
            specificity=s.adjudicator_accuracy,
            controls=self.controls(),
        )

    def adjudicated_topics(self) -> int:
        return min(self.topics, max(2, round(self.share * self.topics)))

    def controls(self) -> int:
        """Per adjudicator: 0.2 of the adjudicated items, at least 10 (as `judge --blind` plans
        them with the bundled plan), times `control_factor`."""
        items = self.adjudicated_topics() * 3 * self.samples
        return max(10, round(0.2 * items)) * self.control_factor

    def careful(self, accuracy: float) -> int:
        """Careful judgments: the adjudicated items' (expected, with escalation) and the
        adjudicators' controls."""
        per_item = (
            escalated_judgments(accuracy, self.adjudicators)
            if self.escalate
            else float(self.adjudicators)
        )
        items = self.adjudicated_topics() * 3 * self.samples
        return round(items * per_item + self.controls() * self.adjudicators)

    def words(self) -> str:
        panel = (
            f"a majority of {self.adjudicators}{' (escalated)' if self.escalate else ''}"
            if self.majority
            else f"{self.adjudicators} adjudicators (mean)"
        )
        return (
            f"{self.topics} topics, {self.adjudicated_topics()} adjudicated ({self.share:.0%}), "
            f"{self.samples} output(s) per prompt, {panel}, {self.controls()} controls "
            "per adjudicator"
        )


@dataclass(frozen=True)
class Decisive:
    """The search's answer: the cheapest design that decides, or None."""

    design: Candidate | None
    careful: int | None
    supported: float | None  # simulated power at `confirm` studies
    refuted: float | None
    studies: int
    target: float
    topics: int  # the study's topics the search started from
    grown: bool  # the study's topics were too few
    tried: int
    # what the simulation assumed: reviewers' accuracy on real items and controls alike
    primary_accuracy: float
    adjudicator_accuracy: float
    p_single: float

    def record(self) -> JsonObject:
        out: JsonObject = {k: v for k, v in asdict(self).items() if k != "design"}
        out["design"] = asdict(self.design) if self.design is not None else None
        return out


@dataclass(frozen=True)
class Assumptions:
    """What the simulation assumes beside the study's shape: the primary reviewers' accuracy on
    real items (sensitivity = specificity) and the plan's gate on the adjudicators' J."""

    primary_accuracy: float
    min_youden: float
    require_robust: bool = False  # adjudication.differential_error: require


def design_power(
    s: GoldPowerSettings, c: Candidate, a: Assumptions, studies: int, seed: int = SEED
) -> tuple[float, float]:
    """Simulated power of the verdict's rule: (supported at +SESOI, refuted at 0)."""
    import numpy as np

    scenario = c.scenario(s, a.primary_accuracy)
    rng = np.random.default_rng(seed)
    out = []
    for effect, column in ((s.sesoi, "supported"), (0.0, "refuted")):
        batch = simulate(scenario, effect, studies, rng)
        decided = auto_rule(batch, s.alpha, s.sesoi, a.min_youden, FINITE_BELOW)
        hits = decided.robust if a.require_robust and column == "supported" else None
        out.append(float((getattr(decided, column) if hits is None else hits).mean()))
    return out[0], out[1]


PANELS = ((2, False, False), (3, True, True))  # (adjudicators, majority, escalate)


def _candidates(topics: int, shares: tuple[float, ...]) -> list[Candidate]:
    return [
        Candidate(topics, share, samples, k, majority, escalate, factor)
        for share, samples, (k, majority, escalate), factor in itertools.product(
            shares, SAMPLES, PANELS, CONTROL_FACTORS
        )
    ]


def decisive_design(
    s: GoldPowerSettings, a: Assumptions, *, screen: int = SCREEN, confirm: int = CONFIRM
) -> Decisive:
    """The cheapest design at the study's topics whose verdict decides, else the fewest topics
    (all adjudicated) at which one does."""
    tried = 0
    assumed = (a.primary_accuracy, s.adjudicator_accuracy, s.p_single)
    grid = [_candidates(s.topics, SHARES)]
    topics = s.topics
    while topics < MAX_GROWTH * s.topics:
        topics = math.ceil(topics * 1.25)
        grid.append(_candidates(topics, (1.0,)))
    for step, candidates in enumerate(grid):
        ordered = sorted(candidates, key=lambda c: c.careful(s.adjudicator_accuracy))
        for c in ordered:
            tried += 1
            if min(design_power(s, c, a, screen)) < s.target - SLACK:
                continue
            sup, ref = design_power(s, c, a, confirm, seed=SEED + 1)
            if min(sup, ref) >= s.target:
                careful = c.careful(s.adjudicator_accuracy)
                found = (c, careful, sup, ref)
                return Decisive(*found, confirm, s.target, s.topics, step > 0, tried, *assumed)
    return Decisive(None, None, None, None, confirm, s.target, s.topics, True, tried, *assumed)


def search_design(g: GoldPower, plan: Plan) -> Decisive:
    """`decisive_design` for `harness power`'s adjudicated figures `g` (primary reviewers at the
    middle accuracy it shows, the plan's gate on J)."""
    agreements = g["agreements"]
    accuracy = agreements[len(agreements) // 2]["agreement"]
    settings = GoldPowerSettings(
        topics=g["topics"],
        p_single=plan.planning.p_single,
        rho=plan.planning.rho,
        sesoi=g["sesoi"],
        alpha=plan.primary.alpha,
        target=g["target"],
        reviewers=g["reviewers"],
        adjudicator_accuracy=g["adjudicator_accuracy"],
    )
    strict = plan.adjudication.differential_error == "require"
    return decisive_design(settings, Assumptions(accuracy, plan.controls.min_youden, strict))


def decisive_lines(d: Decisive, sesoi: float) -> list[str]:
    """What the search found, in words."""
    goal = (
        f"`supported` at a true +{sesoi:g} and `refuted` at a true 0 each in at least "
        f"{d.target:.0%} of simulated studies; primary reviewers {d.primary_accuracy:g} and "
        f"adjudicators {d.adjudicator_accuracy:g} accurate on real items and controls alike, "
        f"single-field novelty {d.p_single:g}"
    )
    if d.design is None:
        return [
            f"  No design decides ({goal}) at up to {MAX_GROWTH} x {d.topics} topics "
            f"({d.tried} designs simulated)."
        ]
    assert d.supported is not None and d.refuted is not None
    head = (
        f"  The {d.topics} topics are too few to decide ({goal}) by any design searched; with "
        "a quarter more topics at each step, every topic adjudicated, the first that does:"
        if d.grown
        else f"  The cheapest design that decides ({goal}):"
    )
    return [
        head,
        f"    {d.design.words()}: {d.careful} careful judgments; supported {d.supported:.1%}, "
        f"refuted {d.refuted:.1%} ({d.studies} studies each, {d.tried} designs simulated in "
        "order of cost)",
    ]


@dataclass(frozen=True)
class StudyPower:
    """The verdict's power at a study's own design, and the cheapest design that decides."""

    design: Candidate
    supported: float
    refuted: float
    studies: int
    decisive: Decisive


def study_power(plan: Plan, topics: int, samples: int, *, search: bool = True) -> StudyPower:
    """At `topics` topics and `samples` outputs per prompt (all models), the plan's adjudicated
    design under its planning assumptions: primary reviewers as accurate as
    planning.sensitivity and specificity (their mean), adjudicators at ADJUDICATOR_ACCURACY."""
    a, p = plan.adjudication, plan.planning
    settings = GoldPowerSettings(
        topics=topics,
        p_single=p.p_single,
        rho=p.rho,
        sesoi=plan.equivalence.sesoi,
        alpha=plan.primary.alpha,
        target=p.power,
        reviewers=p.design.reviewers,
    )
    strict = a.differential_error == "require"
    assumed = Assumptions((p.sensitivity + p.specificity) / 2, plan.controls.min_youden, strict)
    share = a.size(topics) / topics
    own = Candidate(topics, share, samples, a.per_item, a.combine == "majority", a.escalate)
    supported, refuted = design_power(settings, own, assumed, CONFIRM)
    decides = min(supported, refuted) >= settings.target
    if search and not decides:
        decisive = decisive_design(settings, assumed)
    else:
        decisive = _unsearched(settings, assumed)
    return StudyPower(own, supported, refuted, CONFIRM, decisive)


def _unsearched(s: GoldPowerSettings, a: Assumptions) -> Decisive:
    return Decisive(
        None, None, None, None, 0, s.target, s.topics, False, 0,
        a.primary_accuracy, s.adjudicator_accuracy, s.p_single,
    )  # fmt: skip


def study_power_lines(sp: StudyPower, sesoi: float) -> list[str]:
    """prereg.md's and `judge --blind`'s statement of what the design can decide."""
    d, target = sp.decisive, sp.decisive.target
    lines = [
        f"- At this study's design ({sp.design.words()}; primary reviewers "
        f"{d.primary_accuracy:g} and adjudicators {d.adjudicator_accuracy:g} accurate, "
        f"single-field novelty {d.p_single:g}), the verdict's own rule, simulated on "
        f"{sp.studies} studies each, says `supported` at a true +{sesoi:g} in "
        f"{sp.supported:.1%} and `refuted` at a true 0 in {sp.refuted:.1%}.",
    ]
    if min(sp.supported, sp.refuted) >= target:
        lines.append(f"- This design decides: both reach the target power {target:.0%}.")
    elif sp.refuted < 0.05:
        lines.append(
            "- **This design cannot refute the hypothesis**: with no true difference it ends "
            "`inconclusive` in almost every study."
        )
    elif min(sp.supported, sp.refuted) < target:
        lines.append(f"- This design decides less often than the target power {target:.0%}.")
    if d.tried:
        head, *rest = (line.strip() for line in decisive_lines(d, sesoi))
        lines += [f"- {head}", *(f"  {line}" for line in rest)]
    return lines


def design_note(plan: Plan, topics: int, outputs: int) -> str:
    """One line for `judge --blind`: what the drawn design can decide, before any review."""
    sp = study_power(plan, topics, outputs, search=False)
    sesoi, target = plan.equivalence.sesoi, plan.planning.power
    text = (
        f"this design (simulated, planning assumptions): `supported` at a true +{sesoi:g} in "
        f"{sp.supported:.0%} of studies, `refuted` at a true 0 in {sp.refuted:.0%}"
    )
    if sp.refuted < 0.05:
        return f"{text}; it cannot refute: `harness power --adjudicated` finds designs that can"
    if min(sp.supported, sp.refuted) < target:
        return f"{text}, below the target {target:.0%}: `harness power --adjudicated` finds one"
    return text
