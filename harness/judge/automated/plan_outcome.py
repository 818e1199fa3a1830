"""The plan's `outcome:` section as the automated reviewers read it: the preregistered plan if
there is one, else the bundled (calibration and the unsure limit both follow it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.analysis.plan.plan_file import load_plan
from harness.study.manifest import read_manifest
from harness.study.store import Study

if TYPE_CHECKING:
    from harness.analysis.plan.plan_file import Outcome


def plan_outcome(study: Study) -> Outcome:
    prereg = read_manifest(study).prereg
    registered = prereg.plan_path if prereg is not None else None
    path = registered if registered and Path(registered).exists() else None
    return load_plan(path).plan.outcome
