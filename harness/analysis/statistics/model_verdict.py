"""The verdict of a study with several models when the plan's primary analysis is `per_model`.

Each model keeps the single-model rule on its own topic differences d_t:

- supported: its one-sided relabelling test is significant after Holm over the models;
- refuted: the reviewers pass the J gate (they are the same reviewers for every model) and the
  model's d_t lie inside the corrected margin (TOST at alpha/2 against the SESOI times J's lower
  bound, the method of the plan) or its test is significant the other way (one-sided, alpha);
- inconclusive: neither.

The study is `supported` when any model is (Holm keeps the family-wise error at alpha),
`refuted` only when every model is (an intersection-union test: each model at alpha keeps the
chance of refuting while some model has an effect of the SESOI at most alpha), `inconclusive`
otherwise. Withheld studies get no verdict, as with one model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from harness.analysis.plan.plan_file import Plan
from harness.analysis.statistics.across_models import AcrossModels, ModelEffect
from harness.analysis.statistics.equivalence import Equivalence, betting, paired_t
from harness.analysis.statistics.holm import holm_adjust
from harness.analysis.statistics.instrument import Instrument
from harness.analysis.statistics.ppi import PPIResult
from harness.analysis.statistics.verdict import (
    AccuracyGate,
    Decision,
    decide_adjudicated,
    robustness,
)

ModelLabel = Literal["supported", "refuted", "inconclusive"]


@dataclass(frozen=True)
class ModelVerdict:
    model: str
    label: ModelLabel
    reason: str


def corrected_equivalence(d: np.ndarray, plan: Plan, bound: float | None) -> Equivalence | None:
    """TOST of one model's d_t against SESOI * J_L at alpha/2 (None without a usable bound)."""
    if bound is None or not math.isfinite(bound) or bound <= 0:
        return None
    margin, alpha = bound * plan.equivalence.sesoi, plan.primary.alpha / 2
    if plan.equivalence.method == "paired_t":
        return paired_t(d, margin, alpha)
    return betting(d, margin, alpha)


def model_verdict(
    effect: ModelEffect, d: np.ndarray, plan: Plan, gate: AccuracyGate, bound: float | None
) -> ModelVerdict:
    alpha = plan.primary.alpha
    numbers = f"difference {effect.estimate:+.3f}"
    if effect.supported:
        return ModelVerdict(
            effect.model, "supported", f"{numbers}, Holm p = {effect.p_holm:.4g} < {alpha:g}"
        )
    if not gate.ok:
        return ModelVerdict(
            effect.model, "inconclusive", f"{numbers}, Holm p = {effect.p_holm:.4g}; J gate not met"
        )
    if effect.p_less < alpha:
        return ModelVerdict(
            effect.model,
            "refuted",
            f"{numbers}, significant the other way (p = {effect.p_less:.4g})",
        )
    eq = corrected_equivalence(d, plan, bound)
    by_tost = plan.equivalence.refute_by == "equivalence"
    if eq is not None and (eq.equivalent if by_tost else eq.non_superior):
        where, p = ("inside +/-", eq.p_tost) if by_tost else ("below +", eq.p_upper)
        return ModelVerdict(
            effect.model,
            "refuted",
            f"{numbers}, {where}{eq.margin:.3g} ({eq.method} p = {p:.4g} < {eq.alpha:g})",
        )
    return ModelVerdict(
        effect.model,
        "inconclusive",
        f"{numbers}, Holm p = {effect.p_holm:.4g}; the SESOI is not excluded",
    )


def model_verdicts(
    across: AcrossModels, plan: Plan, gate: AccuracyGate, bound: float | None
) -> list[ModelVerdict]:
    if across.differences is None:
        raise ValueError("the across-models result carries no topic differences")
    return [
        model_verdict(e, across.differences[:, m], plan, gate, bound)
        for m, e in enumerate(across.models)
    ]


def decide_per_model(verdicts: list[ModelVerdict], withheld: list[str]) -> Decision:
    """The study's verdict from its models' verdicts (see the module docstring)."""
    if withheld:
        return Decision("no verdict", "; ".join(withheld), withheld=withheld)
    listed = "; ".join(f"{v.model}: {v.label} ({v.reason})" for v in verdicts)
    supported = [v.model for v in verdicts if v.label == "supported"]
    if supported:
        return Decision(
            "supported",
            f"per-model primary analysis: {', '.join(supported)} significant after Holm over "
            f"{len(verdicts)} models. {listed}",
        )
    if all(v.label == "refuted" for v in verdicts):
        return Decision("refuted", f"per-model primary analysis: every model is refuted. {listed}")
    return Decision(
        "inconclusive",
        f"per-model primary analysis: no model significant after Holm and not every model "
        f"refuted. {listed}",
    )


def adjudicated_model_verdicts(
    per_model: list[tuple[str, PPIResult]],
    plan: Plan,
    ceiling: str | None,
    instrument: Instrument | None = None,
    ceilings: dict[str, str | None] | None = None,
) -> list[ModelVerdict]:
    """Each model's verdict on the adjudicated scale, for `decide_per_model`: supported when
    its prediction-powered test is significant after Holm over the models, else its own
    `refuted` or `inconclusive`. `ceilings`: why a model's own adjudicated scale cannot show
    "no difference" (the pooled `ceiling` applies to every model as well)."""
    alpha = plan.primary.alpha
    holm = holm_adjust([p.p_greater() for _, p in per_model])
    out = []
    for (model, ppi), p_holm in zip(per_model, holm, strict=True):
        if p_holm < alpha:
            reason = f"difference {ppi.estimate:+.3f}, Holm p = {p_holm:.4g} < {alpha:g}"
            family = alpha / len(per_model)  # Bonferroni over the models: at least Holm's
            out.append(_significant(model, ppi, plan, instrument, reason, family))
            continue
        own_ceiling = ceiling or (ceilings or {}).get(model)
        own = decide_adjudicated(ppi, plan, [], own_ceiling, instrument)
        label: ModelLabel = "refuted" if own.label == "refuted" else "inconclusive"
        out.append(ModelVerdict(model, label, f"Holm p = {p_holm:.4g}; {own.reason}"))
    return out


def _significant(
    model: str,
    ppi: PPIResult,
    plan: Plan,
    instrument: Instrument | None,
    reason: str,
    alpha: float,
) -> ModelVerdict:
    """A model significant after Holm: supported, unless the plan requires robustness to the
    adjudicators' differential error (`statistics.differential_error`, at `alpha`, the
    family's alpha over the models) and it is not."""
    robust = robustness(ppi, plan, instrument, alpha)
    if robust.withheld:
        return ModelVerdict(
            model, "inconclusive", f"{reason}, but not robust to differential error: {robust.said}"
        )
    return ModelVerdict(model, "supported", f"{reason}; {robust.said}")
