"""The topics the verdict's design needs, read off a study's interval."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from harness.analysis.report.results import AdjudicationResult
from harness.analysis.verdict_topics import verdict_topics, with_topics


def result(**changes: object) -> AdjudicationResult:
    fields: dict = {
        "topics_labelled": 15, "topics_unlabelled": 45, "se": 0.04, "ci_low": -0.09,
        "ci_high": 0.11, "ci_level": 0.95, "tost_low": -0.07, "tost_high": 0.09,
        "alpha": 0.05, "sesoi": 0.1, "youden": 0.8, "margin": 0.07,
    }  # fmt: skip
    return AdjudicationResult.model_construct(**(fields | changes))


def test_the_figures_follow_the_scaled_interval() -> None:
    a = result()
    v = verdict_topics(a, 0.8)
    assert v is not None
    root = math.sqrt(60)
    s, z = 0.04 * root, stats.norm.ppf
    # at the topics needed, the scaled one-sided bound plus z_power SEs reach J x SESOI
    h = 0.08 * root
    assert (h + z(0.8) * s) / math.sqrt(v.detect) <= 0.8 * 0.1
    assert (h + z(0.8) * s) / math.sqrt(v.detect - 1) > 0.8 * 0.1
    # equivalence against the J margin reads the (1 - alpha) interval: half-width 0.10
    h_eq = 0.10 * root
    assert (h_eq + z(0.9) * s) / math.sqrt(v.equivalence) <= 0.07
    assert (h_eq + z(0.9) * s) / math.sqrt(v.equivalence - 1) > 0.07
    assert v.share == pytest.approx(0.25) and v.margin == 0.07


def test_without_a_margin_equivalence_reads_the_one_sided_interval_and_the_sesoi() -> None:
    v = verdict_topics(result(margin=None, youden=None), 0.8)
    assert v is not None and v.scale == 1.0 and v.margin == 0.1
    root, z = math.sqrt(60), stats.norm.ppf
    assert v.equivalence == math.ceil(((0.08 * root + z(0.9) * 0.04 * root) / 0.1) ** 2)


def test_no_interval_no_figure() -> None:
    assert verdict_topics(result(se=None), 0.8) is None
    assert with_topics(result(tost_low=None), 0.8).topics_to_detect is None
    assert with_topics(result(), 0.8).topics_to_detect is not None
