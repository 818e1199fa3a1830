"""The report's figures: reviewer names in the accuracy figure never print over each other, and
log axes label their ticks."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from harness.analysis.report.figures import _forest, accuracy, accuracy_figure
from harness.analysis.report.results import Estimate


def _row(label: str, scope: str, sens: float, spec: float) -> dict[str, Any]:
    return {
        "label": label,
        "scope": scope,
        "kind": "automated" if scope != "pooled" else "mixed",
        "sensitivity": sens,
        "sensitivity_low": sens - 0.2,
        "sensitivity_high": sens + 0.2,
        "specificity": spec,
        "specificity_low": spec - 0.3,
        "specificity_high": min(1.0, spec + 0.1),
    }


def test_reviewers_at_one_point_are_named_apart_in_a_legend():
    # the demo's case: two reviewers and two adjudicators at (nearly) the same accuracy
    rows = [
        _row("retrieval", "reviewer", 0.42, 0.89),
        _row("retrieval-dense", "reviewer", 0.42, 0.89),
        _row("adjudicator-dense", "reviewer", 0.45, 0.87),
        _row("adjudicator-bm25", "reviewer", 0.40, 0.90),
        _row("automated reviewers", "kind", 0.42, 0.89),
        _row("all reviewers", "pooled", 0.42, 0.89),
    ]
    result: Any = SimpleNamespace(controls=SimpleNamespace(accuracy=rows, min_youden=0.3))
    fig = accuracy_figure(result)
    ax = fig.axes[0]
    assert not ax.texts  # nothing written at the points
    legend = ax.get_legend()
    names = [t.get_text() for t in legend.get_texts()]
    for label in ("retrieval:", "retrieval-dense:", "adjudicator-dense:", "all reviewers:"):
        assert any(n.startswith(label) for n in names)
    assert not any(n.startswith("automated reviewers") for n in names)  # per-kind rows left out
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # lays the legend out
    renderer = canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in legend.get_texts()]
    for i, a in enumerate(boxes):  # rows may touch, never cover each other
        for b in boxes[i + 1 :]:
            shared = Bbox.intersection(a, b)
            assert shared is None or shared.height < 1 or shared.width < 1
    # the legend sits beside the axes, not over the points
    assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    assert accuracy(result, 60).startswith(b"\x89PNG")


def _odds(low: float, high: float) -> Estimate:
    return Estimate(
        name="or",
        label="odds ratio",
        role="secondary",
        scale="odds ratio",
        estimate=(low * high) ** 0.5,
        ci_low=low,
        ci_high=high,
    )


@pytest.mark.parametrize(("low", "high"), [(0.7, 1.5), (0.95, 1.08), (0.05, 40.0), (1.2, 3.3)])
def test_an_odds_ratio_panel_labels_its_ticks_however_narrow_its_range(
    low: float, high: float
) -> None:
    fig = Figure()
    ax = fig.subplots()
    _forest(ax, [_odds(low, high)], "odds ratio", 0.1)
    FigureCanvasAgg(fig).draw()
    xmin, xmax = ax.get_xlim()
    labels = [
        (t.get_position()[0], t.get_text())
        for t in ax.get_xticklabels()
        if xmin <= t.get_position()[0] <= xmax
    ]
    assert 3 <= len(labels) <= 9, labels
    assert all(text and float(text) == pytest.approx(x) for x, text in labels)
