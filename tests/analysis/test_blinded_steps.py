"""The blinded steps' fidelity per condition, and its test against brute-force enumeration."""

from __future__ import annotations

import json
from math import comb

import pandas as pd
import pytest

from harness.analysis.blinded_steps import blinded_steps


def entry(step: str, passed: bool | None, support: float = 1.0, **more: object) -> dict:
    e: dict = {"step": step, "backend": "local", "model": "tiny", "outcome": "ok", **more}
    if passed is not None:
        e["fidelity"] = {
            "passed": passed,
            "support": support,
            "min_support": 0.6,
            "added": [] if passed or support < 0.6 else ["novelty"],
            "echoed": False,
        }
        if not passed:
            e["shown"] = "original"
    return e


def frame(cells: dict[str, tuple[int, int]], unchecked: int = 0) -> pd.DataFrame:
    """condition -> (failed, passed) extraction records; `unchecked` more without a check."""
    rows = []
    for condition, (failed, passed) in cells.items():
        for i in range(failed + passed):
            ok = i >= failed
            support = 1.0 if ok else (0.4 if i % 2 else 0.9)
            rows.append((condition, [entry("extract", ok, support)]))
    rows += [("cross", [entry("extract", None)])] * unchecked
    return pd.DataFrame(
        {
            "item_id": [f"I-{i}" for i in range(len(rows))],
            "condition": [c for c, _ in rows],
            "topic_id": ["t"] * len(rows),
            "steps": [json.dumps(s) for _, s in rows],
        }
    )


def fisher_by_enumeration(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher p: the hypergeometric probabilities of every table with the same margins
    that are no more likely than the observed one."""
    row1, col1, n = a + b, a + c, a + b + c + d

    def prob(x: int) -> float:
        return comb(col1, x) * comb(n - col1, row1 - x) / comb(n, row1)

    observed = prob(a)
    lo, hi = max(0, row1 + col1 - n), min(row1, col1)
    return sum(prob(x) for x in range(lo, hi + 1) if prob(x) <= observed * (1 + 1e-7))


@pytest.mark.parametrize(
    "cells",
    [
        {"cross": (3, 1), "single_a": (1, 2), "single_b": (0, 1)},  # the tea-tasting table
        {"cross": (12, 108), "single_a": (10, 110), "single_b": (12, 108)},
        {"cross": (9, 11), "single_a": (1, 19), "single_b": (2, 18), "control": (4, 6)},
    ],
)
def test_counts_per_condition_and_fisher_as_enumerated(cells: dict) -> None:
    result = blinded_steps(frame(cells))
    assert result is not None
    by = {r.group: r for r in result.rows}
    single = tuple(map(sum, zip(cells["single_a"], cells["single_b"], strict=True)))
    assert (by["cross"].failed, by["cross"].checked) == (cells["cross"][0], sum(cells["cross"]))
    assert (by["single"].failed, by["single"].checked) == (single[0], sum(single))
    assert by["cross"].shown_original == cells["cross"][0]
    assert by["cross"].low_support == cells["cross"][0] // 2
    assert ("control" in by) == ("control" in cells)
    (test,) = result.tests
    a, b = cells["cross"]
    expected = fisher_by_enumeration(a, b, *single)
    assert test.p_value == pytest.approx(expected, rel=1e-9)
    assert test.difference == pytest.approx(a / (a + b) - single[0] / sum(single))


def test_the_tea_tasting_table_gives_the_published_p() -> None:
    # Fisher's lady tasting tea, 3 of 4 cups right: two-sided p = 34/70 = 0.4857
    result = blinded_steps(frame({"cross": (3, 1), "single_a": (1, 3)}))
    assert result is not None and result.tests[0].p_value == pytest.approx(34 / 70)


def test_records_before_the_check_are_counted_as_unchecked() -> None:
    result = blinded_steps(frame({"cross": (1, 4), "single_a": (0, 5)}, unchecked=3))
    assert result is not None and result.unchecked == 3
    assert {r.group: r.items - r.checked for r in result.rows} == {"cross": 3, "single": 0}
    assert result.models == {"extract": ["local/tiny"]}


def test_a_step_that_wrote_nothing_counts_as_failed() -> None:
    f = frame({"cross": (1, 3), "single_a": (0, 4)})
    empty = json.dumps(
        [{"step": "extract", "backend": "local", "model": "tiny", "outcome": "empty"}]
    )
    f.loc[len(f)] = ["I-empty", "cross", "t", empty]
    result = blinded_steps(f)
    assert result is not None
    cross = next(r for r in result.rows if r.group == "cross")
    assert (cross.checked, cross.failed, cross.empty, cross.shown_original) == (5, 2, 1, 2)
    assert result.unchecked == 0
    assert result.tests[0].p_value == pytest.approx(fisher_by_enumeration(2, 3, 0, 4))


def test_no_steps_no_section() -> None:
    empty = pd.DataFrame({"item_id": ["I-1"], "condition": ["cross"], "topic_id": ["t"],
                          "steps": ["[]"]})  # fmt: skip
    assert blinded_steps(empty) is None
