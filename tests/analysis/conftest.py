from __future__ import annotations

import pytest

from harness.analysis.plan.plan_file import bundled_plan_path


@pytest.fixture
def fast_plan(tmp_path_factory):
    """The bundled plan without the slow mixed model (fits take seconds)."""
    text = bundled_plan_path().read_text(encoding="utf-8")
    lines = [
        line
        for line in text.splitlines(keepends=True)
        if not line.strip().startswith("- mixed_glm")
    ]
    path = tmp_path_factory.mktemp("plan") / "plan.yaml"
    path.write_text("".join(lines), encoding="utf-8")
    return path
