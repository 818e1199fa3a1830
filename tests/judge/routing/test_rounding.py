"""The routing programme's bound on what whole items cannot avoid: a reviewer's count of items
rarely splits by the conditions' shares, and the bound says by how much at least, exactly."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pandas as pd
import pytest

from harness.judge.routing.roster import Reviewer
from harness.judge.routing.route_items import load_range, rounding_cost, rounding_floor


def brute_force(shares: list[float], tolerance: list[float], load: int) -> float:
    """The least cost over every split of `load` whole items into the cells."""
    best = float("inf")
    for counts in itertools.product(range(load + 1), repeat=len(shares)):
        if sum(counts) == load:
            cost = sum(
                max(abs(c - s * load) - t, 0.0)
                for c, s, t in zip(counts, shares, tolerance, strict=True)
            )
            best = min(best, cost)
    return best


@pytest.mark.parametrize("seed", range(20))
def test_rounding_cost_is_the_least_over_every_split(seed: int) -> None:
    rng = random.Random(seed)
    cells = rng.choice([2, 3, 4])
    weights = [rng.randint(1, 9) for _ in range(cells)]
    shares = [w / sum(weights) for w in weights]
    tolerance = [rng.choice([0.0, 0.0, 0.5, 1.0]) for _ in range(cells)]
    for load in range(13):
        expected = brute_force(shares, tolerance, load)
        got = rounding_cost(np.array(shares), np.array(tolerance), load)
        assert got == pytest.approx(expected, abs=1e-9), (shares, tolerance, load)


def thirds(items: int) -> list[list[tuple[np.ndarray, float]]]:
    """Three conditions of equal share, each exactly (tolerance 0)."""
    condition = np.arange(items) % 3
    return [[((condition == c).astype(float), 0.0) for c in range(3)]]


def test_fourteen_items_cannot_split_evenly_over_three_conditions() -> None:
    # 4.67 each: 5, 5 and 4 at best, 1/3 + 1/3 + 2/3 off
    assert rounding_floor(thirds(42), 14, 14) == pytest.approx(4 / 3)
    assert rounding_floor(thirds(42), 15, 15) == 0.0
    assert rounding_floor(thirds(42), 13, 16) == 0.0  # 15 is within reach
    assert rounding_floor(thirds(42), 16, 17) == pytest.approx(4 / 3)


def test_adjudicators_of_a_drawn_sample_take_one_item_of_every_topic() -> None:
    """14 topics x 3 items, 2 adjudicators per item, 6 adjudicators taking one item per topic:
    every count is fixed at 14, so each one's deviations add up to 4/3 at least."""
    items = pd.DataFrame(
        {"topic_id": [f"t{i // 3}" for i in range(42)], "condition": ["a", "b", "c"] * 14}
    )
    people = [Reviewer(id=f"adj-{n}", kind="human", capacity=20) for n in range(6)]
    assert load_range(items, people, 2, distinct=True) == [(14, 14)] * 6
    machines = [Reviewer(id="auto", kind="automated", method="retrieval", capacity=1000)]
    # with an automated reviewer instead of one of them, the others' counts are free
    mixed = load_range(items, people[:5] + machines, 2, distinct=True)
    assert mixed == [(0, 14)] * 5 + [(14, 42)]
    assert load_range(items, people, 2, distinct=False) == [(0, 20)] * 6
