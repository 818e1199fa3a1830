"""Planning the adjudicated design (`harness power --adjudicated`): the verdict's own rule,
simulated (`planning.design_power`), by the number of adjudicated topics and at each accuracy
of the primary reviewers: power of `supported` at +SESOI and of `refuted` at 0, the first
number that reaches the target power, what the primary-only topics add (a study of the
adjudicated topics alone, the same careful judgments), and escalation's cost.

It replaces a normal approximation of PPI++'s variance with the t reference and the SESOI
unscaled, which did not know the adjudicators' measurement or the tiers' agreement guard and
overstated what the verdict reaches (at the bank's planned sample it promised 0.82 where the
rule then reached 0.32); the simulated figures are the ones to plan by. `planning.
decisive_design` searches the whole design with the same simulation.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal, TypedDict

from harness.analysis.plan.plan_file import Plan
from harness.analysis.planning.design_power import (
    ADJUDICATOR_ACCURACY,
    Candidate,
    GoldPowerSettings,
    assumptions,
    design_power,
    escalated_judgments,
)

__all__ = [
    "ADJUDICATOR_ACCURACY",
    "AGREEMENTS",
    "GoldPower",
    "GoldPowerSettings",
    "adjudicated_lines",
    "adjudicated_power",
    "escalated_judgments",
    "parse_share_or_count",
    "sample_size",
]

AGREEMENTS = (0.7, 0.85, 0.95)  # primary accuracies shown when none is given
SHARES = (0.1, 0.25, 0.5, 1.0)  # sample sizes shown beside the chosen one
STUDIES = 400  # simulated studies per figure (Monte Carlo SE at most 2.5 points)
SEED = 20261206

Verdict = Literal["supported", "refuted"]


class MeasuredRow(TypedDict):
    """The verdict's own rule at one sample size, simulated."""

    adjudicated: int
    careful: int
    supported: float
    refuted: float


class AccuracyFigures(TypedDict):
    """The rule at one primary accuracy: every sample size, the first to reach the target, and
    the chosen sample's topics alone."""

    agreement: float
    rows: list[MeasuredRow]
    needed: dict[str, int | None]
    alone: dict[str, float]


class GoldPower(TypedDict):
    """The figures of `harness power`'s adjudicated section."""

    topics: int
    adjudicated: int
    reviewers: int
    adjudicators: int
    combine: str
    escalate: bool
    adjudicator_accuracy: float
    samples: int
    target: float
    sesoi: float
    controls: int  # per adjudicator at the chosen sample
    differential: str
    interval: str
    sd_topic: float
    studies: int
    accuracies: list[AccuracyFigures]
    escalated: float | None


def sample_size(value: float | int, topics: int) -> int:
    """Topics drawn for a share (float in (0, 1]) or count (int >= 2), as the plan's
    `adjudication.topics` reads it: at least 2, at most `topics`."""
    wanted = value if isinstance(value, int) else round(value * topics)
    return min(topics, max(2, int(wanted)))


def parse_share_or_count(text: str) -> float | int:
    """'0.25' is a share, '90' a count (the type written decides, as in the plan)."""
    try:
        value: float | int = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{text!r} is neither a share (0.25) nor a count (90)") from None
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"a share of topics must lie in (0, 1] (got {value:g})") from None
        return value
    if value != 0 and value < 2:
        raise ValueError("a count of topics must be at least 2 (0: no adjudicated sample)")
    return value


def adjudicated_power(
    settings: GoldPowerSettings,
    plan: Plan,
    *,
    adjudicated: int,
    agreements: list[float],
    studies: int = STUDIES,
) -> GoldPower:
    """The figures of `harness power`'s adjudicated section: `adjudicated` topics in the
    sample, at each primary accuracy of `agreements`, under the plan's rule."""
    s, a = settings, plan.adjudication
    shown = sorted({adjudicated, *(sample_size(x, s.topics) for x in SHARES), s.topics})
    sizes = [n for n in shown if n >= 2]
    chosen = _candidate(s, plan, adjudicated)
    assumed = assumptions(plan, agreements[0])
    return {
        "topics": s.topics,
        "adjudicated": adjudicated,
        "reviewers": s.reviewers,
        "adjudicators": s.adjudicators,
        "combine": a.combine,
        "escalate": a.escalate,
        "adjudicator_accuracy": s.adjudicator_accuracy,
        "samples": s.samples,
        "target": s.target,
        "sesoi": s.sesoi,
        "controls": chosen.controls(assumed),
        "differential": a.differential_error,
        "interval": a.interval,
        "sd_topic": assumed.sd_topic,
        "studies": studies,
        "accuracies": [_at(s, plan, adjudicated, sizes, x, studies) for x in agreements],
        "escalated": (
            escalated_judgments(s.adjudicator_accuracy, s.adjudicators) if a.escalate else None
        ),
    }


def _candidate(s: GoldPowerSettings, plan: Plan, n: int) -> Candidate:
    a = plan.adjudication
    majority = a.combine == "majority"
    return Candidate(s.topics, n / s.topics, s.samples, s.adjudicators, majority, a.escalate)


def _at(
    s: GoldPowerSettings, plan: Plan, chosen: int, sizes: list[int], agreement: float, studies: int
) -> AccuracyFigures:
    assumed = assumptions(plan, agreement)
    rows: list[MeasuredRow] = []
    for n in sizes:
        c = _candidate(s, plan, n)
        supported, refuted = design_power(s, c, assumed, studies, seed=SEED)
        careful = c.careful(assumed, s.adjudicator_accuracy)
        rows.append(
            {"adjudicated": n, "careful": careful, "supported": supported, "refuted": refuted}
        )
    alone = _candidate(replace(s, topics=chosen), plan, chosen)
    supported, refuted = design_power(replace(s, topics=chosen), alone, assumed, studies, SEED)
    return {
        "agreement": agreement,
        "rows": rows,
        "needed": {v: _first(rows, v, s.target) for v in ("supported", "refuted")},
        "alone": {"supported": supported, "refuted": refuted},
    }


def _first(rows: list[MeasuredRow], column: Verdict, target: float) -> int | None:
    """The smallest simulated sample whose power reaches `target` (None: none of them)."""
    return next((r["adjudicated"] for r in rows if r[column] >= target), None)


def _mc_error(studies: int) -> float:
    """Two Monte Carlo standard errors of a simulated power, at its largest (power 0.5)."""
    return float(2 * (0.25 / studies) ** 0.5)


def adjudicated_lines(g: GoldPower) -> list[str]:
    """A compact table of `adjudicated_power`'s figures."""
    sesoi, target = g["sesoi"], g["target"]
    robust = " and robust" if g["differential"] in ("auto", "require") else ""
    head = "".join(f"{'accuracy ' + format(a['agreement'], 'g'):>17}" for a in g["accuracies"])
    lines = [
        f"Adjudicated design: the verdict's own rule simulated ({g['studies']} studies per "
        f"figure, +/- about {_mc_error(g['studies']):.2f} at 2 Monte Carlo SE; adjudication."
        f"interval: {g['interval']}); {g['topics']} topics of {g['samples'] * 3} item(s) (all "
        f"models), {g['reviewers']} primary reviewer(s) per item;",
        f"  {g['adjudicators']} per item, {g['combine']}, adjudicators at accuracy "
        f"{g['adjudicator_accuracy']:g} with {g['controls']} controls each at n = "
        f"{g['adjudicated']}; accuracy: the primary reviewers' sensitivity = specificity on real "
        f"items; topics spread {g['sd_topic']:.2f} on the logit scale (planning.rho);",
        f"  power of supported{robust} at +{sesoi:g} / refuted at 0 (the true difference), by "
        "adjudicated topics n:",
        f"  {'n':>6} {'careful':>8}{head}",
    ]
    for i, first in enumerate(g["accuracies"][0]["rows"]):
        mark = "*" if first["adjudicated"] == g["adjudicated"] else " "
        cells = "".join(
            f"{a['rows'][i]['supported']:>11.3f} /{a['rows'][i]['refuted']:>5.3f}"
            for a in g["accuracies"]
        )
        lines.append(f"  {first['adjudicated']:>5}{mark} {first['careful']:>8}{cells}")
    lines.append("  (* the plan's or --adjudicated sample; careful: adjudicators' judgments)")

    def row(label: str, cell: str) -> str:
        return f"  {label:<40}{cell}"

    for verdict in ("supported", "refuted"):
        cells = "".join(f"{_count(a['needed'][verdict], g['topics']):>17}" for a in g["accuracies"])
        lines.append(row(f"{verdict}: n for {target:.0%}", cells))
    cells = "".join(
        f"{a['alone']['supported']:>11.3f} /{a['alone']['refuted']:>5.3f}" for a in g["accuracies"]
    )
    lines.append(row(f"the {g['adjudicated']} adjudicated topics alone", cells))
    if g.get("escalated") is not None:
        lines.append(
            f"  adjudication.escalate: about {g['escalated']:.2f} adjudicator judgments per item "
            f"at accuracy {g['adjudicator_accuracy']:g}, against {g['adjudicators']} (the labels "
            f"of a majority of {g['adjudicators']})"
        )
    return lines


def _count(value: int | None, topics: int) -> str:
    """The topics needed, or `> topics` where no simulated sample reaches the target."""
    return f"> {topics}" if value is None else str(value)
