"""The plan's `outcome:` section as the automated reviewers read it: the preregistered plan if
there is one, else the bundled (calibration and the unsure limit both follow it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.analysis.plan.plan_file import load_plan
from harness.study.manifest import load_manifest
from harness.study.store import Study

if TYPE_CHECKING:
    from harness.analysis.plan.plan_file import Outcome


def plan_outcome(study: Study) -> Outcome:
    registered = load_manifest(study.path).get("prereg", {}).get("plan_path")
    path = registered if registered and Path(registered).exists() else None
    return load_plan(path).plan.outcome
