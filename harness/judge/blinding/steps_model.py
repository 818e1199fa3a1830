"""Which model writes what reviewers read, said on the terminal: the blinded steps' model, the
advice to name a capable one when the study tests a remote model, and the steps' fidelity."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.defaults import EMBEDDED_MODEL_NAME
from harness.errors import HarnessError
from harness.models.providers import parse_model
from harness.study.store import Study
from harness.study.tables.assignments import count_assignments
from harness.study.tables.collect_models import model_counts

if TYPE_CHECKING:
    from harness.judge.items.blinded_items import StepSummary

__all__ = ["capable_model_advice", "served_models", "steps_line"]


def _provider(key: str) -> str:
    try:
        return parse_model(key).provider
    except HarnessError:  # a key from an older study that no longer parses: not a local one
        return "?"


def served_models(study: Study) -> list[str]:
    """The study's models with outputs that are not the embedded model or another local one."""
    return [k for k, n in model_counts(study).items() if n and _provider(k) != "local"]


def capable_model_advice(study_dir: str | Path, model: str | None, steps_on: bool) -> str | None:
    """One line when the blinded steps are about to run on the embedded model while the study
    tests a model served elsewhere: reviewers would judge texts a 135M model wrote about a
    larger model's outputs. None when routed (the steps are fixed), or nothing to advise."""
    if not steps_on or (model is not None and _provider(model) != "local"):
        return None
    with Study.open(study_dir) as study:
        if count_assignments(study):
            return None
        remote = served_models(study)
    if not remote:
        return None
    return (
        f"note: the blinded steps (extraction, normalisation) run on the embedded "
        f"{EMBEDDED_MODEL_NAME}, while the study tests {', '.join(remote[:3])}; reviewers read "
        "what the steps write, so name a capable model for them with --model (for example "
        "--model openai/gpt-4o-mini); Ctrl-C now keeps every step done, and nothing is routed "
        "until the steps finish"
    )


def steps_line(summary: dict[str, StepSummary]) -> str | None:
    """`Blinded steps:` the model of each step and how many of its texts failed the fidelity
    check (those items are shown in their original form); None without steps."""
    parts = []
    for step, s in summary.items():
        models = ", ".join(sorted({f"{r['backend']}/{r['model']}" for r in s["runs"]}))
        f = s.get("fidelity", {})
        shown = "no core shown" if step == "extract" else "original text shown"
        checked = f"{f.get('failed', 0)} of {f.get('checked', 0)} failed fidelity ({shown})"
        parts.append(f"{step} by {models}: {checked}")
    return "Blinded steps: " + "; ".join(parts) if parts else None
