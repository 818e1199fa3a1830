"""What a study on every topic of a bank can decide: `harness power --bank`.

For the bank's size and the plan's assumptions: power of the primary test (normal approximation
of the paired difference, McNemar beside it), power of the plan's own equivalence test with
perfect reviewers, and both verdicts at a stated reviewer accuracy, where misclassification
shrinks the difference by J and refutation needs equivalence on the corrected scale (margin
SESOI x J's one-sided lower bound at alpha / 2, as `harness analyze` tests it). The equivalence
figures are simulated (harness.analysis.planning.equivalence_power), with their Monte Carlo SE.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

from harness.analysis.plan.plan_file import Plan
from harness.analysis.planning.equivalence_power import equivalence_power, equivalence_topics
from harness.analysis.statistics.decisive import youden_bound
from harness.analysis.statistics.sample_size import (
    discordant,
    mcnemar_power,
    paired_power,
    paired_sample_size,
    sd_binary_difference,
    tost_sample_size,
)
from harness.errors import HarnessError

BANK_REPS = 400  # simulated studies per equivalence estimate (Monte Carlo SE <= 0.025)
BANK_SEED = 20261202


class PowerInputs(TypedDict):
    """The resolved inputs of `power()`: the plan's planning section and the options."""

    topics: int
    p_single: float
    effect: float
    rho: float
    alpha: float
    target: float
    sesoi: float
    equivalence_difference: float  # the true difference the equivalence figures assume
    models: int
    model_correlation: float


class EquivalenceFigures(TypedDict):
    """Simulated power of the equivalence test at the bank's size, and topics needed."""

    margin: float
    power: float | None  # None: no margin to test against
    se: float | None
    needed: int | None
    normal: int | None  # the normal approximation of the paired TOST


class BankPower(TypedDict):
    """What a study on every topic of a bank can decide."""

    topics: int
    label: str
    method: str
    reps: int
    seed: int
    paired_power: float
    mcnemar_power: float
    equivalence: EquivalenceFigures
    sensitivity: float
    specificity: float
    youden: float
    youden_bound: float
    controls: int
    supported_power: float
    supported_needed: int | None
    refute: EquivalenceFigures


def observed(pi: float, sensitivity: float, specificity: float) -> float:
    """Share judged novel when the true share is pi: misses of novelty and false alarms."""
    youden = sensitivity + specificity - 1.0
    return min(max((1.0 - sensitivity) + youden * pi, 1e-6), 1.0 - 1e-6)


def bank_power(
    plan: Plan,
    inputs: PowerInputs,
    topics: int,
    label: str,
    *,
    sensitivity: float,
    specificity: float,
    reps: int = BANK_REPS,
    seed: int = BANK_SEED,
) -> BankPower:
    """Every figure of the bank section; `inputs` are the resolved inputs of `power()`."""
    alpha, target, sesoi, rho = (inputs["alpha"], inputs["target"], inputs["sesoi"], inputs["rho"])
    p0, effect = inputs["p_single"], inputs["effect"]
    method = plan.equivalence.method
    sd = sd_binary_difference(p0 + effect, p0, rho)
    p10, p01 = discordant(p0 + effect, p0, rho)
    perfect = _equivalence(method, p0, rho, sesoi, alpha, target, topics, reps, seed)
    youden = sensitivity + specificity - 1.0
    q0 = observed(p0, sensitivity, specificity)
    q1 = observed(p0 + effect, sensitivity, specificity)
    sd_q = sd_binary_difference(q1, q0, rho)
    bound = (
        youden_bound(sensitivity, specificity, plan.planning.controls, 1.0 - alpha)
        if plan.planning.controls
        else -1.0
    )
    refute = _equivalence(
        method, q0, rho, sesoi * max(bound, 0.0), alpha / 2, target, topics, reps, seed
    )
    return {
        "topics": topics,
        "label": label,
        "method": method,
        "reps": reps,
        "seed": seed,
        "paired_power": paired_power(topics, effect, sd, alpha),
        "mcnemar_power": mcnemar_power(topics, p10, p01, alpha),
        "equivalence": perfect,
        "sensitivity": sensitivity,
        "specificity": specificity,
        "youden": youden,
        "youden_bound": bound,
        "controls": plan.planning.controls,
        "supported_power": paired_power(topics, q1 - q0, sd_q, alpha) if q1 > q0 else 0.0,
        "supported_needed": _needed(lambda: paired_sample_size(q1 - q0, sd_q, alpha, target)),
        "refute": refute,
    }


def _equivalence(
    method: str,
    p: float,
    rho: float,
    margin: float,
    alpha: float,
    target: float,
    topics: int,
    reps: int,
    seed: int,
) -> EquivalenceFigures:
    """Simulated power at `topics` and topics needed, both arms at p (no true difference)."""
    p10, p01 = discordant(p, p, rho)
    sd = sd_binary_difference(p, p, rho)
    if margin <= 0:
        return {"margin": margin, "power": None, "se": None, "needed": None, "normal": None}
    at = equivalence_power(method, topics, p10, p01, margin, alpha, reps, seed)
    normal = _needed(lambda: tost_sample_size(sd, margin, 0.0, alpha, target))
    needed = equivalence_topics(
        method, p10, p01, margin, alpha, target, reps, seed, normal or topics
    )
    return {"margin": margin, "power": at.power, "se": at.se, "needed": needed, "normal": normal}


def _needed(compute: Callable[[], int | None]) -> int | None:
    try:
        needed: int | None = compute()
        return needed
    except HarnessError:
        return None


def bank_lines(b: BankPower, i: PowerInputs) -> list[str]:
    e, r = b["equivalence"], b["refute"]
    return [
        f"On the topic bank ({b['label']}, {b['topics']} topics), equivalence by the plan's "
        f"method {b['method']!r} ({b['reps']} simulated studies per figure, seed {b['seed']}):",
        f"  primary, perfect reviewers: power {b['paired_power']:.3f} to detect "
        f"{i['effect']:+g} (paired normal approximation; McNemar {b['mcnemar_power']:.3f})",
        f"  equivalence at +/-{i['sesoi']:g}, perfect reviewers, no true difference: power "
        f"{_pm(e)}; topics needed for {i['target']:.0%}: {_count(e['needed'])} (normal "
        f"approximation of the paired TOST: {_count(e['normal'])})",
        f"  at reviewer sensitivity {b['sensitivity']:g}, specificity {b['specificity']:g} "
        f"(J {b['youden']:.2f}, {b['controls']} control judgments, J's one-sided lower bound "
        f"{b['youden_bound']:.3f}):",
        f"    supported: power {b['supported_power']:.3f}; topics needed for "
        f"{i['target']:.0%}: {_count(b['supported_needed'])}",
        f"    refuted (equivalence on the corrected scale, margin {r['margin']:.3f}, alpha/2): "
        f"power {_pm(r)}; topics needed for {i['target']:.0%}: {_count(r['needed'])}",
    ]


def _pm(x: EquivalenceFigures) -> str:
    return "n/a" if x["power"] is None else f"{x['power']:.3f} +/- {x['se']:.3f}"


def _count(value: int | None) -> str:
    return "not reachable" if value is None else str(value)
