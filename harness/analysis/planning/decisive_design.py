"""The cheapest design found whose verdict decides, by simulating the verdict's own rule
(`planning.design_power`, under the plan's rule and assumptions).

A design is the share of topics adjudicated, outputs per prompt, the adjudicators' panel (two
whose mean is taken, or a majority of three routed by escalation: two first, a third only where
they disagree), and controls per adjudicator (as `judge --blind` plans them, or two or four times
that). Its cost is in careful judgments: adjudicated items x adjudicator judgments per item
(expected, with escalation), plus every adjudicator's controls. Candidates are simulated in order
of cost; the first whose `supported` at a true +SESOI (supported and robust to differential
error under `adjudication.differential_error: require`) and `refuted` at a true 0 both reach
the target power on a screen (SCREEN studies, SLACK below the target allowed) and then on
CONFIRM fresh studies is the answer, and its power is reported from a third, independent run
(the confirmed estimate is selected, so biased upwards). The confirmation must clear the
target by one Monte Carlo SE (`margin`), so that a design whose true power is just at the
target passes in about one search in six: "found" means the first whose simulation passed,
and its fresh figures may still fall a little below the target. When
none at the study's topics decides, topics grow in steps of a quarter (every topic adjudicated),
up to MAX_GROWTH times the study's: the report then says the topics are too few and how many did.

Escalation does not change what the verdict sees (a third adjudicator only breaks a tie of two,
so the majority's label is the same), only its cost.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace

from harness.analysis.plan.plan_file import Plan
from harness.analysis.planning.design_power import (
    ADJUDICATOR_ACCURACY,
    Assumptions,
    Candidate,
    GoldPowerSettings,
    assumptions,
    design_power,
)
from harness.analysis.planning.gold_power import GoldPower
from harness.study.records import JsonObject

__all__ = [
    "Decisive",
    "Observed",
    "StudyPower",
    "decisive_design",
    "decisive_lines",
    "design_note",
    "differential_note",
    "search_design",
    "study_power",
    "study_power_lines",
]

SHARES = (0.25, 0.5, 0.75, 1.0)
SAMPLES = (1, 2, 3)
PANELS = ((2, False, False), (3, True, True))  # (adjudicators, majority, escalate)
CONTROL_FACTORS = (1, 2, 4)
SCREEN = 200  # simulated studies per effect when screening a candidate (MC SE 2.8% at 80%)
SLACK = 0.05  # a screen this close to the target goes on to be confirmed
CONFIRM = 1000  # ... when confirming it, and for the figures reported (MC SE 1.3% at 80%)


def margin(target: float, studies: int) -> float:
    """How far the confirming run must clear the target: one Monte Carlo SE of a power at the
    target. A design chosen as the first of many to clear it cleared it by luck as often as not
    (without a margin the chosen design's true power was below the target in 18-31% of a
    stylised search's runs, 1-3% with it; its fresh figures fell 1-2 points below)."""
    return math.sqrt(target * (1.0 - target) / studies)


MAX_GROWTH = 8  # topics searched up to this many times the study's
SEED = 20261207


@dataclass(frozen=True)
class Decisive:
    """The search's answer: the cheapest design found that decides, or None."""

    design: Candidate | None
    careful: int | None
    supported: float | None  # simulated power on fresh studies (not the selecting run)
    refuted: float | None
    studies: int
    target: float
    topics: int  # the study's topics the search started from
    grown: bool  # the study's topics were too few
    tried: int
    assumed: Assumptions
    adjudicator_accuracy: float
    p_single: float

    def record(self) -> JsonObject:
        out: JsonObject = {k: v for k, v in asdict(self).items() if k not in ("design", "assumed")}
        out["design"] = asdict(self.design) if self.design is not None else None
        out["assumed"] = asdict(self.assumed)
        return out

    def assumptions_text(self) -> str:
        a = self.assumed
        return (
            f"primary reviewers {a.primary_accuracy:g} and adjudicators "
            f"{self.adjudicator_accuracy:g} accurate on real items and controls alike, "
            f"adjudicators' calls on one control correlated {a.control_correlation:g} "
            f"(planning.control_correlation), single-field novelty {self.p_single:g}, topics "
            f"spread {a.sd_topic:.2f} on the logit scale (planning.rho), several models counted "
            f"as independent outputs; adjudication.interval: {a.interval}"
        )


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
    """The cheapest design found at the study's topics whose verdict decides, else the first
    topic count (all adjudicated, growing by a quarter) at which one does."""
    tried = 0
    grid = [_candidates(s.topics, SHARES)]
    topics = s.topics
    while topics < MAX_GROWTH * s.topics:
        topics = math.ceil(topics * 1.25)
        grid.append(_candidates(topics, (1.0,)))
    for step, candidates in enumerate(grid):
        ordered = sorted(candidates, key=lambda c: c.careful(a, s.adjudicator_accuracy))
        for c in ordered:
            tried += 1
            if min(design_power(s, c, a, screen)) < s.target - SLACK:
                continue
            if min(design_power(s, c, a, confirm, seed=SEED + 1)) < s.target + margin(
                s.target, confirm
            ):
                continue
            sup, ref = design_power(s, c, a, confirm, seed=SEED + 2)
            careful = c.careful(a, s.adjudicator_accuracy)
            return _answer(s, a, (c, careful, sup, ref), confirm, step > 0, tried)
    return _answer(s, a, (None, None, None, None), confirm, True, tried)


def _answer(
    s: GoldPowerSettings,
    a: Assumptions,
    found: tuple[Candidate | None, int | None, float | None, float | None],
    studies: int,
    grown: bool,
    tried: int,
) -> Decisive:
    return Decisive(
        *found, studies, s.target, s.topics, grown, tried, a, s.adjudicator_accuracy, s.p_single
    )


def search_design(g: GoldPower, plan: Plan) -> Decisive:
    """`decisive_design` for `harness power`'s adjudicated figures `g` (primary reviewers at the
    middle accuracy it shows)."""
    accuracies = g["accuracies"]
    accuracy = accuracies[len(accuracies) // 2]["agreement"]
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
    return decisive_design(settings, assumptions(plan, accuracy))


def decisive_lines(d: Decisive, sesoi: float) -> list[str]:
    """What the search found, in words."""
    goal = (
        f"`supported` at a true +{sesoi:g} and `refuted` at a true 0 each in at least "
        f"{d.target:.0%} of simulated studies; {d.assumptions_text()}"
    )
    if d.design is None:
        return [
            f"  No design decides ({goal}) at up to {MAX_GROWTH} x {d.topics} topics "
            f"({d.tried} designs simulated)."
        ]
    assert d.supported is not None and d.refuted is not None
    head = (
        f"  The {d.topics} topics are too few to decide ({goal}) by any design searched; with "
        "a quarter more topics at each step, every topic adjudicated, the first that did:"
        if d.grown
        else f"  The cheapest design found that decides ({goal}):"
    )
    return [
        head,
        f"    {d.design.words(d.assumed)}: {d.careful} careful judgments; supported "
        f"{d.supported:.1%}, refuted {d.refuted:.1%} on {d.studies} fresh studies each (the "
        f"first of {d.tried} designs, in order of cost, whose simulation cleared the target)",
    ]


@dataclass(frozen=True)
class StudyPower:
    """The verdict's power at a study's own design, and the cheapest design that decides."""

    design: Candidate
    supported: float
    refuted: float
    studies: int
    decisive: Decisive


def _settings(plan: Plan, topics: int, adjudicator_accuracy: float) -> GoldPowerSettings:
    p = plan.planning
    return GoldPowerSettings(
        topics=topics,
        p_single=p.p_single,
        rho=p.rho,
        sesoi=plan.equivalence.sesoi,
        alpha=plan.primary.alpha,
        target=p.power,
        reviewers=p.design.reviewers,
        adjudicator_accuracy=adjudicator_accuracy,
    )


@dataclass(frozen=True)
class Observed:
    """What a study measured, in place of the plan's assumptions (None: the plan's)."""

    adjudicated: int | None = None  # topics adjudicated
    primary_accuracy: float | None = None  # on real items, against the adjudicators
    adjudicator_accuracy: float | None = None  # on their controls
    p_single: float | None = None  # novel rate on the adjudicated scale


def study_power(
    plan: Plan,
    topics: int,
    samples: int,
    *,
    search: bool = True,
    observed: Observed | None = None,
    studies: int = CONFIRM,
) -> StudyPower:
    """At `topics` topics and `samples` outputs per prompt (all models), the plan's adjudicated
    design under its planning assumptions (primary reviewers as accurate as planning.sensitivity
    and specificity, their mean; adjudicators at ADJUDICATOR_ACCURACY) or what a study
    `observed`. The search runs only when the design falls short of the target."""
    a, p, o = plan.adjudication, plan.planning, observed or Observed()
    settings = _settings(plan, topics, o.adjudicator_accuracy or ADJUDICATOR_ACCURACY)
    if o.p_single is not None:
        settings = replace(settings, p_single=min(max(o.p_single, 0.01), 0.99))
    primary = o.primary_accuracy or (p.sensitivity + p.specificity) / 2
    assumed = assumptions(plan, primary)
    share = (o.adjudicated or a.size(topics)) / topics
    own = Candidate(topics, share, samples, a.per_item, a.combine == "majority", a.escalate)
    supported, refuted = design_power(settings, own, assumed, studies)
    if search and min(supported, refuted) < settings.target:
        decisive = decisive_design(settings, assumed)
    else:
        decisive = _answer(settings, assumed, (None, None, None, None), 0, False, 0)
    return StudyPower(own, supported, refuted, studies, decisive)


def study_power_lines(sp: StudyPower, sesoi: float) -> list[str]:
    """prereg.md's statement of what the design can decide."""
    d, target = sp.decisive, sp.decisive.target
    lines = [
        f"- At this study's design ({sp.design.words(d.assumed)}; {d.assumptions_text()}), the "
        f"verdict's own rule, simulated on {sp.studies} studies each, says `supported` at a true "
        f"+{sesoi:g} in {sp.supported:.1%} and `refuted` at a true 0 in {sp.refuted:.1%}.",
    ]
    if min(sp.supported, sp.refuted) >= target:
        lines.append(f"- This design decides: both reach the target power {target:.0%}.")
    elif sp.refuted < 0.05:
        lines.append(
            "- **This design cannot refute the hypothesis**: with no true difference it ends "
            "`inconclusive` in almost every study."
        )
    else:
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


_FORMS = [(e, k) for e in ("published", "not_published") for k in ("cross", "single")]


def differential_note(mode: str, labels: Iterable[tuple[str, str]]) -> str:
    """One line for `judge --blind`: do the planted controls, (expected, kind) of each control
    item, measure the adjudicators' differential error, and what will a `supported` need?"""
    counts = Counter(labels)
    head = f"differential error (adjudication.differential_error: {mode})"
    missing = [
        f"{'unpublished' if e == 'not_published' else 'published'} {k}-field"
        for e, k in _FORMS
        if not counts[(e, k)]
    ]
    if missing:
        then = (
            "no `supported` or `refuted` can be shown robust to it, so neither is possible"
            if mode == "require"
            else "a `supported` will say that it is not measured"
        )
        return (
            f"{head}: no {', no '.join(missing)} control, so the adjudicators' differential "
            f"error cannot be measured; {then}; controls of every form from a controls file "
            "(`--controls`) measure it"
        )
    shown = ", ".join(f"{counts[c]}" for c in _FORMS)
    then = (
        "says whether it is robust" if mode == "report" else "and a `refuted` must be robust to it"
    )
    return (
        f"{head}: controls of both forms (published cross / single, unpublished cross / single: "
        f"{shown}) measure it; a `supported` {then}"
    )
