"""`harness run`: every stage in order, on the embedded defaults or as a study file says.

Modules: `runner` (`run_study`: the stages in order, resuming where a study stopped) and
`run_settings` (`RunSettings`: defaults, then a study file, then command-line flags). The study
file itself is read by `harness.materials.study_file`, which `harness power` reads too.
"""

from __future__ import annotations

from harness.pipeline.run_settings import RunSettings, settings
from harness.pipeline.runner import RunResult, run_study

__all__ = ["RunResult", "RunSettings", "run_study", "settings"]
