"""Cross-field prompt harness: matched prompts, outputs, blinded review, preregistered analysis.

The public Python API is re-exported here lazily, so that `import harness` (and the CLI) stays fast:
heavy libraries load only when a function that needs them is called.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_API = {
    "Study": "harness.study.store",
    "HarnessError": "harness.errors",
    "load_topic_bank": "harness.materials.topics",
    "export_prompts": "harness.export",
    "export_table": "harness.export",
    "read_table": "harness.export",
    "write_explorer": "harness.explore",
    "study_status": "harness.status",
    "collect_models": "harness.collect",
    "analyze": "harness.analysis",
    "prereg": "harness.analysis",
    "power": "harness.analysis",
    "blind": "harness.judge",
    "import_reviews": "harness.judge",
    "run_automated": "harness.judge.automated",
    "calibrate_automated": "harness.judge.automated",
    "search": "harness.literature",
    "run_probe": "harness.geometry.probe",
    "run_study": "harness.run",
    "check_bank": "harness.curation",
    "draft_topics": "harness.curation.draft",
}
# Stage modules that are callable like their main function: `harness.generate(...)`.
_STAGES = ("generate", "collect")


def __getattr__(name: str) -> Any:
    if name in _STAGES:
        return importlib.import_module(f"harness.{name}")
    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API, *_STAGES])


__all__ = ["__version__", *_API, *_STAGES]
