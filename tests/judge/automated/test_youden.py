"""The threshold choice equals the brute-force maximum of Youden's J."""

from __future__ import annotations

import numpy as np
import pytest

from harness.judge.automated.youden import Observation, accuracy, best_threshold, decide, not_novel


def brute_force(observations: list[Observation], unsure: str) -> tuple[float, set[float]]:
    """Max J over a fine grid and every score, and the grid points that reach it."""
    scores = [o.score for o in observations if o.score is not None]
    grid = set(np.round(np.arange(-0.2, 1.2001, 0.0005), 4).tolist()) | set(scores)
    js = {t: _youden(observations, t, unsure) for t in grid}
    top = max(js.values())
    return top, {t for t, j in js.items() if j >= top - 1e-12}


def _youden(observations: list[Observation], t: float, unsure: str) -> float:
    """J written out from its definition, independently of harness.judge.automated.youden."""
    pub = [not_novel(decide(o, t), unsure) for o in observations if o.expected == "published"]
    unp = [not_novel(decide(o, t), unsure) for o in observations if o.expected == "not_published"]
    pub, unp = [v for v in pub if v is not None], [v for v in unp if v is not None]
    return sum(pub) / len(pub) + sum(not v for v in unp) / len(unp) - 1


def test_hand_made_set():
    obs = [
        Observation("published", 1.0),
        Observation("published", 0.9),
        Observation("published", 0.5),
        Observation("not_published", 0.29),
        Observation("not_published", None, "not_published"),
    ]
    best = best_threshold(obs, 0.6, "not_novel")
    assert best.threshold == 0.5 and best.youden == 1.0
    assert accuracy(obs, 0.6, "not_novel").youden == pytest.approx(2 / 3 - 0)
    top, argmax = brute_force(obs, "not_novel")
    assert best.youden == top and 0.5 in argmax and 0.6 not in argmax


def test_default_is_kept_when_it_is_among_the_best():
    obs = [Observation("published", 0.9), Observation("not_published", 0.2)]
    assert best_threshold(obs, 0.6, "not_novel").threshold == 0.6
    assert best_threshold(obs, 0.95, "not_novel").threshold == 0.9
    assert best_threshold(obs, 0.1, "not_novel").threshold == 0.9
    # J 0.5 at 0.25 and at 0.75, both 0.25 from the default: the higher wins
    tied = [
        Observation("published", 0.75),
        Observation("published", 0.25),
        Observation("not_published", 0.5),
        Observation("not_published", 0.125),
    ]
    assert accuracy(tied, 0.25, "not_novel").youden == accuracy(tied, 0.75, "not_novel").youden
    assert best_threshold(tied, 0.5, "not_novel").threshold == 0.75


def test_a_reviewer_worse_than_chance_publishes_nothing_by_score():
    obs = [Observation("published", 0.2), Observation("not_published", 0.9)]
    best = best_threshold(obs, 0.6, "not_novel")
    assert best.threshold > 0.9 and best.youden == 0.0


@pytest.mark.parametrize("unsure", ["not_novel", "novel", "exclude"])
@pytest.mark.parametrize("seed", range(40))
def test_random_sets_match_brute_force(seed, unsure):
    rng = np.random.default_rng(seed)
    obs = []
    for expected, centre in (("published", 0.65), ("not_published", 0.4)):
        for _ in range(int(rng.integers(2, 12))):
            kind = rng.random()
            if kind < 0.1:
                obs.append(Observation(expected, None, "unsure"))
            elif kind < 0.2:
                obs.append(Observation(expected, None, "not_published"))
            else:  # scores on a coarse grid, so ties are common
                obs.append(
                    Observation(
                        expected, round(float(np.clip(rng.normal(centre, 0.2), 0, 1)) * 20) / 20
                    )
                )
    default = float(rng.choice([0.6, 0.65, 0.3]))
    try:
        best = best_threshold(obs, default, unsure)
    except ValueError:  # every control of one kind unsure and excluded
        assert unsure == "exclude"
        return
    top, argmax = brute_force(obs, unsure)
    assert best.youden == pytest.approx(top, abs=1e-12)
    if default in argmax:
        assert best.threshold == default


def test_one_kind_missing_cannot_calibrate():
    with pytest.raises(ValueError, match="published and unpublished"):
        best_threshold([Observation("published", 0.9)], 0.6, "not_novel")
