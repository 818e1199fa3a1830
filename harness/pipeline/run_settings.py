"""The settings of `harness run`: defaults, then a study file, then command-line flags, as one
`RunSettings`.

The defaults live here and nowhere else; a study file (`harness.materials.study_file`) and the
command line build the same object, and `run_study` takes it. `RunOptions` names the same fields for
Python callers who pass them as keywords, so that the type checker refuses a misspelt or
mistyped setting; the command line passes its flags by field name (`settings`), and a test
keeps both to the fields of `RunSettings`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Self, TypedDict, cast

from harness.defaults import DEFAULT_SEED
from harness.errors import HarnessError
from harness.materials.study_file import LoadedStudyFile, ModelEntry, load_study_file
from harness.models.providers import LABEL_MARK, model_of, parse_model
from harness.study.records import JsonObject

__all__ = ["RunOptions", "RunSettings", "settings"]

#: Completion length for the demo: long enough for a one-sentence idea and a short test.
RUN_MAX_TOKENS = 80
#: The demo's publication-date cut-off. The bank's known links run from 1798 to 2018 with no link
#: from 1985, so this date splits them into published and unpublished controls almost evenly
#: (99 and 101 of all 94 topics, 72 and 75 of the first 60) and leaves none out for its year.
DEMO_CUTOFF = "1985-01-01"
_PATHS = ("topics", "reviewers", "plan")


@dataclass(frozen=True)
class RunSettings:
    """Every setting of `harness run` (`run_study`), with its default."""

    pilot: bool = False
    limit: int | None = None  # the first N topics, or ...
    subset: int | None = None  # ... N chosen by the seeded spread rule
    subset_seed: int | None = None  # default: seed
    topics: Path | None = None  # topic bank (default: bundled)
    seed: int = DEFAULT_SEED
    model: str | None = None  # the local model of the blind steps and the probe
    configurations: bool = True  # without `models`: the local model at each demo configuration
    samples: int = 1
    max_tokens: int = RUN_MAX_TOKENS
    extract: bool = True
    normalise: bool = True
    reviewers: Path | None = None  # roster (default: the demo roster)
    probe: bool = True
    cutoff: str | None = DEMO_CUTOFF
    controls: bool = True
    plan: Path | None = None  # analysis plan to preregister (default: bundled)
    demo: bool = True  # the report calls the verdict a demonstration
    models: tuple[str, ...] | None = None  # provider strings collected, as `harness collect`
    model_args: tuple[str, ...] | None = None  # MODEL@KEY=VALUE
    study_file: Mapping[str, object] | None = None  # the manifest record of a study file

    def with_options(self, options: RunOptions) -> Self:
        """These settings with `options` set over them."""
        return replace(self, **options)

    def record(self) -> JsonObject:
        """Every setting as JSON values (paths as text, sequences as lists); the manifest's
        `study_file.overrides` holds those of the flags given."""
        out: JsonObject = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            out[f.name] = value
        return out

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Self:
        """The settings a `record()` (or any part of one) holds; the rest keep their defaults."""
        values: dict[str, object] = {}
        for name, value in record.items():
            if name in _PATHS and isinstance(value, str):
                value = Path(value)
            elif name in ("models", "model_args") and isinstance(value, list):
                value = tuple(value)
            values[name] = value
        return cls().with_options(_options(values))


def _options(values: Mapping[str, object]) -> RunOptions:
    """`values` as keyword options, once every name is checked to be a setting (the values are
    the setting's type where they come from: a record read back, or the command line)."""
    unknown = sorted(set(values) - {f.name for f in fields(RunSettings)})
    if unknown:
        raise HarnessError(f"unknown run setting {unknown[0]!r}", column=unknown[0])
    return cast("RunOptions", dict(values))


class RunOptions(TypedDict, total=False):
    """RunSettings' fields by name, as keywords (`run_study(study, pilot=True, ...)`)."""

    pilot: bool
    limit: int | None
    subset: int | None
    subset_seed: int | None
    topics: Path | None
    seed: int
    model: str | None
    configurations: bool
    samples: int
    max_tokens: int
    extract: bool
    normalise: bool
    reviewers: Path | None
    probe: bool
    cutoff: str | None
    controls: bool
    plan: Path | None
    demo: bool
    models: tuple[str, ...] | None
    model_args: tuple[str, ...] | None
    study_file: Mapping[str, object] | None


def settings(config: Path | None, flags: Mapping[str, object]) -> RunSettings:
    """The settings of `run_study`: the defaults, the study file `config` over them, and the
    flags given over both; a given flag's override of the file is recorded in the manifest.

    `flags` are the command line's values by RunSettings field name, None where a flag was not
    given (the parser has checked each value's type)."""
    given = _options({k: v for k, v in flags.items() if v is not None})
    if config is None:
        return RunSettings().with_options(given)

    loaded = load_study_file(config)
    chosen = from_study_file(loaded).with_options(given)
    overrides = {k: v for k, v in chosen.record().items() if k in given}
    return replace(chosen, study_file=loaded.record(overrides))


def from_study_file(loaded: LoadedStudyFile) -> RunSettings:
    """The settings a study file gives (paths resolved against its folder)."""
    c = loaded.config
    models, model_args = model_settings(c.models, loaded.resolve, loaded.path)
    local = next((model_of(m).partition("/")[2] for m in models if m.startswith("local/")), None)
    return RunSettings(
        pilot=c.pilot,
        limit=c.limit,
        subset=c.subset,
        subset_seed=c.subset_seed,
        topics=loaded.resolve(c.topics),
        seed=c.seed,
        model=local,
        models=tuple(models),
        model_args=tuple(model_args),
        samples=c.samples,
        max_tokens=c.max_tokens or RUN_MAX_TOKENS,
        extract=c.extract,
        normalise=c.normalise,
        reviewers=loaded.resolve(c.roster),
        probe=c.probe,
        cutoff=c.cutoff or DEMO_CUTOFF,
        controls=c.controls,
        plan=loaded.resolve(c.plan),
        demo=c.demo,
        study_file=loaded.record({}),
    )


def model_settings(
    entries: list[ModelEntry], resolve: Callable[[str | None], Path | None], config: Path
) -> tuple[list[str], list[str]]:
    """Provider strings and `MODEL@KEY=VALUE` model arguments of the file's model entries
    (local paths resolved against the file's folder)."""
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
        settings = entry.model_settings()
        if entry.base_urls:
            settings["base_url"] = ",".join(entry.base_urls)
        settings.update(entry.args)
        args += [
            f"{name}@{key}={_text(value)}" for key, value in settings.items() if value is not None
        ]
    return models, args


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)
