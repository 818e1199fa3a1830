"""Analysis plans for tests: the bundled plan with one setting changed."""

from __future__ import annotations

from pathlib import Path

from harness.analysis.plan.plan_file import bundled_plan_path

BUNDLED_SAMPLE = "  topics: 0.25 "


def primary_only_plan(folder: Path, text: str | None = None) -> Path:
    """`folder/plan-primary.yaml`: the bundled plan (or `text`) without an adjudicated sample,
    for studies whose rosters have primary reviewers only."""
    text = text if text is not None else bundled_plan_path().read_text(encoding="utf-8")
    assert BUNDLED_SAMPLE in text
    path = Path(folder) / "plan-primary.yaml"
    path.write_text(text.replace(BUNDLED_SAMPLE, "  topics: 0    "), encoding="utf-8")
    return path
