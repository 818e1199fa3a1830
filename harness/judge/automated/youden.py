"""The threshold of an automated reviewer that maximises Youden's J on calibration controls.

An automated reviewer turns each item into a score (the best hit's match score, or the stated
confidence of a model's `published` verdict) and decides `published` when the score reaches a
threshold. On control items with known answers, each candidate threshold gives a sensitivity
(published controls judged not novel), a specificity (unpublished controls judged novel) and
J = sensitivity + specificity - 1, with `unsure` coded as the analysis plan codes it. J only
changes at observed scores, so the candidates are the documented default, every observed score
and a value just above the highest; ties go to the candidate nearest the default, then to the
higher (stricter) one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Two J values closer than this are a tie (J is a difference of two ratios of small counts).
TIE = 1e-12


@dataclass(frozen=True)
class Observation:
    """One control item as a reviewer scored it."""

    expected: str  # published | not_published
    score: float | None  # None: the threshold cannot change the verdict
    otherwise: str = "unsure"  # the verdict when score is None


def decide(observation: Observation, threshold: float) -> str:
    """The verdict at `threshold`: published when the score reaches it."""
    if observation.score is None:
        return observation.otherwise
    return "published" if observation.score >= threshold else "not_published"


def not_novel(verdict: str, unsure: str) -> bool | None:
    """Whether a verdict counts as "not novel" under the plan's unsure coding (None: left out)."""
    if verdict == "published":
        return True
    if verdict == "not_published":
        return False
    return {"not_novel": True, "novel": False}.get(unsure)


@dataclass(frozen=True)
class Accuracy:
    threshold: float
    sensitivity: float
    specificity: float
    n_published: int  # published controls with a coded verdict
    n_not_published: int

    @property
    def youden(self) -> float:
        return self.sensitivity + self.specificity - 1.0


def accuracy(observations: Sequence[Observation], threshold: float, unsure: str) -> Accuracy:
    """Sensitivity, specificity and J at one threshold; ValueError when a kind is missing."""
    hits = {"published": [0, 0], "not_published": [0, 0]}  # [correct, counted]
    for obs in observations:
        coded = not_novel(decide(obs, threshold), unsure)
        if coded is None:
            continue
        counts = hits[obs.expected]
        counts[1] += 1
        counts[0] += coded == (obs.expected == "published")
    (tp, n_pub), (tn, n_unpub) = hits["published"], hits["not_published"]
    if not n_pub or not n_unpub:
        raise ValueError("calibration needs published and unpublished controls with a verdict")
    return Accuracy(threshold, tp / n_pub, tn / n_unpub, n_pub, n_unpub)


def candidates(observations: Sequence[Observation], default: float) -> list[float]:
    """Every threshold that can give a different J: the default, each observed score, and
    just above the highest (nothing is published by its score)."""
    scores = {o.score for o in observations if o.score is not None}
    above = {math.nextafter(max(scores), math.inf)} if scores else set()
    return sorted({default, *scores, *above})


def best_threshold(observations: Sequence[Observation], default: float, unsure: str) -> Accuracy:
    """The candidate with the largest J; ties to the nearest to `default`, then the higher."""
    measured = [accuracy(observations, t, unsure) for t in candidates(observations, default)]
    top = max(m.youden for m in measured)
    tied = [m for m in measured if m.youden >= top - TIE]
    return min(tied, key=lambda m: (abs(m.threshold - default), -m.threshold))
