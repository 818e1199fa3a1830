"""`harness power`: analytic power and sample size, and optionally a full-design simulation.

Defaults come from the plan's `planning` section, so `harness power` with no options answers
"what does the preregistered design give us?".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.analyze.plan import Plan, load_plan
from harness.analyze.sample_size import (
    discordant,
    mcnemar_power,
    mcnemar_sample_size,
    paired_power,
    paired_sample_size,
    power_curve,
    sd_binary_difference,
    tost_power,
    tost_sample_size,
)
from harness.analyze.simulate import SimulationResult, simulate_design
from harness.errors import HarnessError


@dataclass
class PowerResult:
    inputs: dict[str, Any]
    analytic: dict[str, Any]
    curve: pd.DataFrame
    simulation: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        i, a = self.inputs, self.analytic
        lines = [
            f"Power for {i['topics']} topics: p_single {i['p_single']:g}, effect "
            f"{i['effect']:+g}, rho {i['rho']:g}, one-sided alpha {i['alpha']:g}, "
            f"target {i['target']:.0%}, SESOI {i['sesoi']:g}",
            f"  McNemar (Connor 1987), p10 {a['p10']:.4f} p01 {a['p01']:.4f}: power "
            f"{a['mcnemar_power']:.3f}; topics needed {a['mcnemar_needed']}",
            f"  Paired difference (normal, SD {a['sd']:.3f}): power {a['paired_power']:.3f}; "
            f"topics needed {a['paired_needed']}",
            f"  Equivalence at +/-{i['sesoi']:g} when the difference is 0: power "
            f"{a['tost_power']:.3f}; topics needed {a['tost_needed']}",
        ]
        s = self.simulation
        if s:
            lines += [
                f"Simulation of the full design through the primary analysis ({s['reps']} "
                f"studies each; {s['design']}):",
                f"  power {s['power']:.3f} +/- {s['power_se']:.3f} (Monte Carlo SE)",
                f"  type I error {s['type_i']:.3f} +/- {s['type_i_se']:.3f}; pooled z-test "
                f"(literal rule) {s['pooled_type_i']:.3f} +/- {s['pooled_type_i_se']:.3f}",
                f"  SD of d_t {s['sd_d']:.3f}; topics needed for {i['target']:.0%}: "
                f"{s['topics_needed']}" + (f" (simulated power there {s['power_at_needed']:.3f})"
                                           if s["power_at_needed"] is not None else ""),
            ]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def power(*, topics: int | None = None, p_single: float | None = None,
          effect: float | None = None, sesoi: float | None = None, rho: float | None = None,
          alpha: float | None = None, target: float | None = None, simulate: bool = False,
          reps: int | None = None, samples: int | None = None, reviewers: int | None = None,
          seed: int | None = None, plan: str | Path | Plan | None = None) -> PowerResult:
    """Analytic power (Connor 1987; normal approximations) and, with `simulate`, the full
    design run through the exact primary analysis."""
    base = plan if isinstance(plan, Plan) else load_plan(plan).plan
    p = base.planning
    inputs = {
        "topics": topics or p.topics, "p_single": p.p_single if p_single is None else p_single,
        "effect": p.effect if effect is None else effect, "rho": p.rho if rho is None else rho,
        "alpha": alpha or base.primary.alpha, "target": target or p.power,
        "sesoi": sesoi or base.equivalence.sesoi,
    }
    if inputs["topics"] < 2:
        raise HarnessError("--topics must be at least 2", column="topics")
    analytic = _analytic(inputs)
    grid = np.unique(np.geomspace(10, max(4 * inputs["topics"], 400), 40).astype(int))
    curve = power_curve(grid, p_single=inputs["p_single"], effect=inputs["effect"],
                        sesoi=inputs["sesoi"], rho=inputs["rho"], alpha=inputs["alpha"])
    result = PowerResult(inputs, analytic, curve)
    if simulate:
        design = base.planning.design.model_copy(update={
            k: v for k, v in (("samples", samples), ("reviewers", reviewers)) if v})
        sim_plan = base.model_copy(update={
            "primary": base.primary.model_copy(update={"alpha": inputs["alpha"]}),
            "planning": p.model_copy(update={"power": inputs["target"]})})
        sim = simulate_design(sim_plan, design, topics=inputs["topics"],
                              p_single=inputs["p_single"], effect=inputs["effect"], reps=reps,
                              seed=seed)
        result.simulation = _simulation(sim, design)
    return result


def _analytic(i: dict[str, Any]) -> dict[str, Any]:
    p_cross = i["p_single"] + i["effect"]
    p10, p01 = discordant(p_cross, i["p_single"], i["rho"])
    sd = sd_binary_difference(p_cross, i["p_single"], i["rho"])
    n, alpha, target = i["topics"], i["alpha"], i["target"]
    return {
        "p10": p10, "p01": p01, "sd": sd,
        "mcnemar_power": mcnemar_power(n, p10, p01, alpha),
        "mcnemar_needed": _or_none(lambda: mcnemar_sample_size(p10, p01, alpha, target)),
        "paired_power": paired_power(n, i["effect"], sd, alpha),
        "paired_needed": _or_none(lambda: paired_sample_size(i["effect"], sd, alpha, target)),
        "tost_power": tost_power(n, sd, i["sesoi"], 0.0, alpha),
        "tost_needed": _or_none(lambda: tost_sample_size(sd, i["sesoi"], 0.0, alpha, target)),
    }


def _or_none(compute: Any) -> int | None:
    try:
        return compute()
    except HarnessError:
        return None


def _simulation(sim: SimulationResult, design: Any) -> dict[str, Any]:
    return {
        "reps": sim.power.reps, "design": ", ".join(f"{k} {v:g}" for k, v in
                                                    design.model_dump().items()),
        "power": sim.power.primary, "power_se": sim.power.primary_se,
        "type_i": sim.type_i.primary, "type_i_se": sim.type_i.primary_se,
        "pooled_type_i": sim.type_i.pooled, "pooled_type_i_se": sim.type_i.pooled_se,
        "sd_d": sim.power.sd_d if math.isfinite(sim.power.sd_d) else None,
        "topics_needed": sim.topics_needed, "power_at_needed": sim.power_at_needed,
    }
