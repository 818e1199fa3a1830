"""Cross-field prompt harness: matched prompts, outputs, blinded review, preregistered analysis.

The public Python API. Each stage is a function named after its CLI command, defined in a module
named for what it does (`generate` in `harness.generation`, `collect` in `harness.collection`,
`blind` in `harness.judge.blinding.blind_stage`, `run_probe` in `harness.probing`, `analyze` in
`harness.analysis.run`). The modules this file imports keep heavy libraries (numpy, pandas, torch,
...) inside the functions that use them, so `import harness` and `harness --help` stay fast; ruff's
banned-module-level-imports rule (pyproject.toml) keeps it so.
"""

from __future__ import annotations

from harness._version import __version__
from harness.analysis.planning.power_analysis import power
from harness.analysis.planning.preregister import prereg
from harness.analysis.run import analyze
from harness.collection import collect, collect_models
from harness.curation.check import check_bank
from harness.curation.draft import draft_topics
from harness.errors import HarnessError
from harness.explore import write_explorer
from harness.export import export_prompts, export_table, read_table
from harness.generation import generate
from harness.judge.automated.auto_review import calibrate_automated, run_automated
from harness.judge.blinding.blind_stage import blind
from harness.judge.packets.packet_import import import_reviews
from harness.literature import search
from harness.materials.bank import load_topic_bank
from harness.pipeline.runner import run_study
from harness.probing import run_probe
from harness.status import study_status
from harness.study.store import Study

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
