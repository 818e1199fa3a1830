"""Power and type I error of the primary analysis by simulation (`harness power`), with the
topics a decisive study needs and the smallest effect its topics detect, both searched with the
simulation itself.

The latent model and one design's rejection rates are in `full_design`; the searches, which
call those rates, in `design_search`; this module runs both, so each depends on the one below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats

from harness.analysis.plan.plan_file import Design, Plan
from harness.analysis.simulation.design_search import SearchResult, search_effect, search_topics
from harness.analysis.simulation.full_design import Rejections, rejection_rates
from harness.analysis.statistics.sample_size import paired_sample_size


@dataclass(frozen=True)
class SimulationResult:
    topics: int
    effect: float
    power: Rejections
    type_i: Rejections
    topics_search: SearchResult | None  # topics needed for the plan's target power at `effect`
    effect_search: SearchResult | None  # minimal detectable effect at `topics`
    seed: int  # null run; effect run seed + 1, searches + 2, + 3

    @property
    def topics_needed(self) -> int | None:
        s = self.topics_search
        return None if s is None or s.value is None else int(s.value)

    @property
    def power_at_needed(self) -> float | None:
        return None if self.topics_search is None else self.topics_search.power


def simulate_design(
    plan: Plan,
    design: Design | None = None,
    *,
    topics: int | None = None,
    p_single: float | None = None,
    effect: float | None = None,
    reps: int | None = None,
    seed: int | None = None,
) -> SimulationResult:
    """Power and type I error of the primary analysis, the topics a decisive study needs and
    the smallest effect `topics` topics detect, both searched with the simulation itself."""

    planning = plan.planning
    design = design or planning.design
    topics = topics or planning.topics
    p_single = planning.p_single if p_single is None else p_single
    effect = planning.effect if effect is None else effect
    reps = reps or planning.simulations
    seed = plan.primary.seed if seed is None else seed
    alpha, target = plan.primary.alpha, planning.power
    null = rejection_rates(
        plan, design, topics=topics, p_single=p_single, effect=0.0, reps=reps, seed=seed
    )
    alt = rejection_rates(
        plan, design, topics=topics, p_single=p_single, effect=effect, reps=reps, seed=seed + 1
    )
    sd = alt.sd_d if math.isfinite(alt.sd_d) else null.sd_d
    needed = mde = None
    if effect > 0 and math.isfinite(sd):
        start = max(2, paired_sample_size(effect, sd, alpha, target))
        needed = search_topics(
            plan,
            design,
            p_single=p_single,
            effect=effect,
            target=target,
            start=start,
            reps=reps,
            seed=seed + 2,
        )
    if math.isfinite(sd):
        z = stats.norm.isf(alpha) + stats.norm.isf(1 - target)
        mde = search_effect(
            plan,
            design,
            topics=topics,
            p_single=p_single,
            target=target,
            start=z * sd / math.sqrt(topics),
            reps=reps,
            seed=seed + 3,
        )
    return SimulationResult(topics, effect, alt, null, needed, mde, seed)
