"""The settings of `harness run`: defaults, then a study file, then command-line flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.defaults import DEFAULT_SEED
from harness.errors import HarnessError

__all__ = ["settings"]


def settings(config: Path | None, flags: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of `run_study`. `flags` holds every run option, None where not given;
    a given flag overrides the study file, and the override is recorded in the manifest."""
    from harness.run import DEMO_CUTOFF, RUN_MAX_TOKENS

    out: dict[str, Any] = {
        "pilot": False, "limit": None, "topics": None, "seed": DEFAULT_SEED, "model": None,
        "samples": 1, "max_tokens": RUN_MAX_TOKENS, "extract": True, "normalise": True,
        "reviewers": None, "probe": True, "cutoff": DEMO_CUTOFF, "controls": True}
    if config is not None:
        out.update(_from_file(config))
    given = {k: v for k, v in flags.items() if v is not None}
    out.update(given)
    if config is not None:
        out["study_file"]["overrides"] = {k: str(v) if isinstance(v, Path) else v
                                          for k, v in sorted(given.items())}
    return out


def _from_file(config: Path) -> dict[str, Any]:
    from harness.run import DEMO_CUTOFF, RUN_MAX_TOKENS
    from harness.study_file import load_study_file

    loaded = load_study_file(config)
    c = loaded.config
    entry = c.models[0]
    local = _local_model(c, config)
    return {
        "pilot": c.pilot, "limit": c.limit, "topics": loaded.resolve(c.topics), "seed": c.seed,
        "model": str(loaded.resolve(local)) if local else None,
        "samples": entry.samples or c.samples,
        "max_tokens": entry.max_tokens or c.max_tokens or RUN_MAX_TOKENS,
        "extract": c.extract, "normalise": c.normalise, "reviewers": loaded.resolve(c.roster),
        "probe": c.probe, "cutoff": c.cutoff or DEMO_CUTOFF, "controls": c.controls,
        "plan": loaded.resolve(c.plan), "demo": c.demo, "study_file": loaded.record({}),
    }


def _local_model(c: Any, config: Path) -> str | None:
    """The model path of the file's one local model (None: the embedded model)."""
    entry = c.models[0]
    plain = (len(c.models) == 1 and not entry.base_url and not entry.args
             and entry.temperature is None and entry.top_p is None)
    if not plain or not (entry.model == "local" or entry.model.startswith("local/")):
        raise HarnessError(
            "`harness run` runs one local model (`local` or `local/PATH`) with its default "
            "sampling; collect other or several models with `harness collect` and run the "
            "later stages one by one", file=config, column="models")
    return entry.model.partition("/")[2] or None
