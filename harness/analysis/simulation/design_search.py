"""Searches that run the full-design simulation: topics needed and minimal detectable effect.

Both start from a normal approximation, bracket the target power by stepping with simulations,
then bisect, so that the reported value is one whose own simulation reaches the target (and the
neighbouring value below it does not). Every simulation in a search uses the same seed: over the
effect that gives common random numbers (only the cross-field shift changes), so simulated power
rises with the effect and the bisection is stable.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from harness.analysis.plan.plan_file import Design, Plan
from harness.analysis.simulation.full_design import rejection_rates

#: Above this many topics the simulated search is skipped (too slow); the start is reported.
MAX_SEARCH_TOPICS = 5000
#: Resolution of the effect search (a difference in proportions).
EFFECT_STEP = 0.001


@dataclass(frozen=True)
class SearchResult:
    value: float | None  # topics needed / minimal detectable effect; None: not reached
    power: float | None  # simulated power at `value`
    power_se: float | None  # its Monte Carlo standard error
    below: float | None  # the next value below on the search grid, which falls short
    power_below: float | None
    start: float  # the normal-approximation starting point
    simulations: int  # simulated designs run by the search (each of `reps` studies)
    reps: int
    seed: int
    value_se: float | None = None  # Monte Carlo SE of the value (effect search only)


class _Rates:
    """Simulated power by grid point, each computed once."""

    def __init__(self, run: Callable[[int], float]) -> None:
        self.run = run
        self.seen: dict[int, float] = {}

    def __call__(self, k: int) -> float:
        if k not in self.seen:
            self.seen[k] = self.run(k)
        return self.seen[k]


def _bracket(
    rate: _Rates, start: int, low: int, high: int, target: float, step: int
) -> tuple[int | None, int | None]:
    """(last grid point short of target, first reaching it), stepping out from start."""
    start = min(max(start, low), high)
    hit: int | None
    miss: int | None
    if rate(start) >= target:
        hit, miss = start, None
        while miss is None and hit > low:
            k = max(low, hit - step)
            if rate(k) >= target:
                hit, step = k, 2 * step
            else:
                miss = k
        return miss, hit
    miss, hit = start, None
    while hit is None and miss < high:
        k = min(high, miss + step)
        if rate(k) >= target:
            hit = k
        else:
            miss, step = k, 2 * step
    return miss, hit


def _bisect(
    rate: _Rates, miss: int | None, hit: int | None, target: float
) -> tuple[int | None, int | None]:
    while miss is not None and hit is not None and hit - miss > 1:
        mid = (miss + hit) // 2
        if rate(mid) >= target:
            hit = mid
        else:
            miss = mid
    return miss, hit


def _se(p: float, reps: int) -> float:
    return math.sqrt(p * (1 - p) / reps)


def _result(
    rate: _Rates,
    miss: int | None,
    hit: int | None,
    scale: float,
    start: float,
    reps: int,
    seed: int,
    value_se: float | None = None,
) -> SearchResult:
    """Grid points -> values (topics, or effects at `scale` per step) with their power."""

    def value(k: int | None) -> float | None:
        return None if k is None else (k if scale == 1 else k * scale)

    power = None if hit is None else rate(hit)
    return SearchResult(
        value(hit),
        power,
        None if power is None else _se(power, reps),
        value(miss),
        None if miss is None else rate(miss),
        start,
        len(rate.seen),
        reps,
        seed,
        value_se,
    )


def search_topics(
    plan: Plan,
    design: Design,
    *,
    p_single: float,
    effect: float,
    target: float,
    start: int,
    reps: int,
    seed: int,
) -> SearchResult:
    """Smallest number of topics whose simulated power at `effect` reaches `target`."""
    rate = _Rates(
        lambda n: (
            rejection_rates(
                plan, design, topics=n, p_single=p_single, effect=effect, reps=reps, seed=seed
            ).primary
        )
    )
    if start > MAX_SEARCH_TOPICS:
        return SearchResult(None, None, None, None, None, start, 0, reps, seed)
    miss, hit = _bracket(rate, start, 2, MAX_SEARCH_TOPICS, target, max(1, start // 10))
    miss, hit = _bisect(rate, miss, hit, target)
    return _result(rate, miss, hit, 1, start, reps, seed)


def search_effect(
    plan: Plan,
    design: Design,
    *,
    topics: int,
    p_single: float,
    target: float,
    start: float,
    reps: int,
    seed: int,
) -> SearchResult:
    """Smallest cross-minus-single difference whose simulated power at `topics` reaches target.

    Its Monte Carlo SE is the SE of the power there divided by the slope of the simulated power
    across the bracket found before bisecting.
    """
    rate = _Rates(
        lambda k: (
            rejection_rates(
                plan,
                design,
                topics=topics,
                p_single=p_single,
                effect=k * EFFECT_STEP,
                reps=reps,
                seed=seed,
            ).primary
        )
    )
    # the largest difference the simulated design can produce (unsure verdicts cap it)
    high = math.floor(((1 - design.unsure_rate) - p_single) / EFFECT_STEP) - 1
    k0 = max(1, round(start / EFFECT_STEP))
    outer = _bracket(rate, k0, 1, high, target, 20)
    miss, hit = _bisect(rate, *outer, target)
    value_se = None
    below, above = outer
    if hit is not None and below is not None and above is not None and above > below:
        slope = (rate(above) - rate(below)) / ((above - below) * EFFECT_STEP)
        if slope > 0:
            value_se = _se(rate(hit), reps) / slope
    return _result(rate, miss, hit, EFFECT_STEP, start, reps, seed, value_se)
