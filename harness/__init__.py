"""Cross-field prompt harness: matched prompts, outputs, blinded review, preregistered analysis.

The public Python API. Each stage is a function named after its CLI command, defined in a module
named for what it does (`generate` in `harness.generation.generate_stage`, `collect` in
`harness.collection.collect_stage`, `blind` in `harness.judge.blinding.blind_stage`, `run_probe`
in `harness.geometry.probe_stage`, `analyze` in
`harness.analysis.run`). `import harness` loads none of them: each name below is imported from its
module on first use (`__getattr__`, PEP 562), so the stages import what they use at their tops and
`import harness` stays fast. Type checkers read the same names from the `TYPE_CHECKING` block;
tests/test_api.py keeps it equal to `_HOMES`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from harness._version import __version__

if TYPE_CHECKING:
    from harness.analysis.planning.power_analysis import power
    from harness.analysis.planning.preregister import prereg
    from harness.analysis.run import analyze
    from harness.collection.collect_stage import collect, collect_models
    from harness.curation.check import check_bank
    from harness.curation.draft import draft_topics
    from harness.errors import HarnessError
    from harness.explore import write_explorer
    from harness.export import export_prompts, export_table, read_table
    from harness.generation.generate_stage import generate
    from harness.geometry.probe_stage import run_probe
    from harness.judge.automated.auto_review import calibrate_automated, run_automated
    from harness.judge.blinding.blind_stage import blind
    from harness.judge.packets.packet_import import import_reviews
    from harness.literature import search
    from harness.materials.bank import load_topic_bank
    from harness.pipeline.runner import run_study
    from harness.status.stage_table import study_status
    from harness.study.store import Study

#: public name -> the module that defines it
_HOMES: dict[str, str] = {
    "power": "harness.analysis.planning.power_analysis",
    "prereg": "harness.analysis.planning.preregister",
    "analyze": "harness.analysis.run",
    "collect": "harness.collection.collect_stage",
    "collect_models": "harness.collection.collect_stage",
    "check_bank": "harness.curation.check",
    "draft_topics": "harness.curation.draft",
    "HarnessError": "harness.errors",
    "write_explorer": "harness.explore",
    "export_prompts": "harness.export",
    "export_table": "harness.export",
    "read_table": "harness.export",
    "generate": "harness.generation.generate_stage",
    "calibrate_automated": "harness.judge.automated.auto_review",
    "run_automated": "harness.judge.automated.auto_review",
    "blind": "harness.judge.blinding.blind_stage",
    "import_reviews": "harness.judge.packets.packet_import",
    "search": "harness.literature",
    "load_topic_bank": "harness.materials.bank",
    "run_probe": "harness.geometry.probe_stage",
    "run_study": "harness.pipeline.runner",
    "study_status": "harness.status.stage_table",
    "Study": "harness.study.store",
}

__all__ = [
    "HarnessError",
    "Study",
    "__version__",
    "analyze",
    "blind",
    "calibrate_automated",
    "check_bank",
    "collect",
    "collect_models",
    "draft_topics",
    "export_prompts",
    "export_table",
    "generate",
    "import_reviews",
    "load_topic_bank",
    "power",
    "prereg",
    "read_table",
    "run_automated",
    "run_probe",
    "run_study",
    "search",
    "study_status",
    "write_explorer",
]


def __getattr__(name: str) -> object:
    """Import a public name's module on first use; later reads find the name in the module."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
