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
        "pilot": False,
        "limit": None,
        "subset": None,
        "subset_seed": None,
        "topics": None,
        "seed": DEFAULT_SEED,
        "model": None,
        "configurations": True,
        "samples": 1,
        "max_tokens": RUN_MAX_TOKENS,
        "extract": True,
        "normalise": True,
        "reviewers": None,
        "probe": True,
        "cutoff": DEMO_CUTOFF,
        "controls": True,
    }
    if config is not None:
        out.update(_from_file(config))
    given = {k: v for k, v in flags.items() if v is not None}
    out.update(given)
    if config is not None:
        out["study_file"]["overrides"] = {
            k: str(v) if isinstance(v, Path) else v for k, v in sorted(given.items())
        }
    return out


def _from_file(config: Path) -> dict[str, Any]:
    from harness.run import DEMO_CUTOFF, RUN_MAX_TOKENS
    from harness.study_file import load_study_file

    loaded = load_study_file(config)
    c = loaded.config
    models, model_args = model_settings(c.models, loaded.resolve, config)
    from harness.models.providers import model_of

    local = next((model_of(m).partition("/")[2] for m in models if m.startswith("local/")), None)
    return {
        "pilot": c.pilot,
        "limit": c.limit,
        "subset": c.subset,
        "subset_seed": c.subset_seed,
        "topics": loaded.resolve(c.topics),
        "seed": c.seed,
        "model": local,
        "models": models,
        "model_args": model_args,
        "samples": c.samples,
        "max_tokens": c.max_tokens or RUN_MAX_TOKENS,
        "extract": c.extract,
        "normalise": c.normalise,
        "reviewers": loaded.resolve(c.roster),
        "probe": c.probe,
        "cutoff": c.cutoff or DEMO_CUTOFF,
        "controls": c.controls,
        "plan": loaded.resolve(c.plan),
        "demo": c.demo,
        "study_file": loaded.record({}),
    }


def model_settings(entries: list[Any], resolve: Any, config: Path) -> tuple[list[str], list[str]]:
    """Provider strings and `MODEL@KEY=VALUE` model arguments of the file's model entries
    (local paths resolved against the file's folder)."""
    from harness.models.providers import LABEL_MARK, parse_model

    models: list[str] = []
    args: list[str] = []
    for n, entry in enumerate(entries):
        name = entry.model
        if name.startswith("local/"):
            name = f"local/{resolve(name.partition('/')[2])}"
        if entry.label is not None:
            name += LABEL_MARK + entry.label
        field = f"models.{n}.label" if entry.label is not None else f"models.{n}.model"
        try:
            parse_model(name)
        except HarnessError as error:
            raise HarnessError(str(error.message), file=config, column=field) from None
        if name in models:
            raise HarnessError(
                f"model {name} is listed twice (give each configuration of a model its own label)",
                file=config,
                column=field,
            )
        models.append(name)
        settings = {
            k: getattr(entry, k)
            for k in ("base_url", "samples", "temperature", "top_p", "max_tokens")
        }
        if entry.base_urls:
            settings["base_url"] = ",".join(entry.base_urls)
        settings.update(entry.args)
        args += [
            f"{name}@{key}={_text(value)}" for key, value in settings.items() if value is not None
        ]
    return models, args


def _text(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value)
