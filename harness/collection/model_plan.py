"""Which models a `collect` run serves, and with what settings.

A study files its models' settings under their keys (provider strings, `MODEL#LABEL` for one
configuration of a model run under several settings) in the meta table. Once a
model has outputs, the settings that make its outputs what they are (sampling parameters, token
parameter name, body fields) are fixed; run options (endpoint, concurrency, cost cap) may change.
A rerun without models resumes every model of the study with its stored settings.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import cast

from pydantic import JsonValue

from harness.collection.collect_settings import CollectSettings
from harness.errors import HarnessError
from harness.models.base import GenerationParams
from harness.models.model_args import (
    EXTRA,
    IDENTITY_KEYS,
    OMIT,
    OMITTABLE,
    RUN_OPTIONS,
    parse_model_args,
    request_fields,
)
from harness.models.providers import ModelSpec, legacy_spec, parse_model, resolve_model
from harness.models.settings import (
    BackendSettings,
    OpenAISettings,
    build_settings,
    foreign,
    option_names,
)
from harness.study import Study
from harness.study.manifest import read_manifest
from harness.study.records import JsonObject
from harness.study.tables.collect_models import ModelSettings, stored_models
from harness.study.tables.outputs import output_count

DEFAULTS: dict[str, JsonValue] = {"samples": 1, **GenerationParams().as_dict()}
#: Allowed values of the sampling settings, checked before anything is stored.
RANGES: dict[str, tuple[float, float]] = {
    "samples": (1, 10_000),
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "max_tokens": (1, 1_000_000),
}
WHOLE = ("samples", "max_tokens", "seed")
REMOTE_ONLY = ("token_param", "reasoning_effort", "stop")
#: Run options a rerun keeps from a model's earlier runs unless given again (stored with the
#: model's settings as `run_options`, in `RUN_OPTIONS`' order). Not kept: the endpoint (a rerun
#: goes to the recorded server, see `collect_stage._settle_endpoint`) and the cost cap (each
#: run's own); the Batch API is a flag that cannot be unset, not an option.
KEPT_OPTIONS = tuple(name for name in RUN_OPTIONS if name not in ("base_url", "max_cost"))
RUN_OPTIONS_KEY = "run_options"


@dataclass
class ModelRun:
    """One model of a run: its spec, stored settings and this run's backend settings.

    `given` names the backend options set for this run (the manifest records those, not the
    defaults)."""

    spec: ModelSpec
    settings: ModelSettings
    backend_settings: BackendSettings
    given: frozenset[str] = field(default_factory=frozenset)
    max_cost: float | None = None
    #: run options taken from the model's earlier runs (not given this time), by name
    kept: dict[str, object] = field(default_factory=dict)
    #: run options given with another value than the earlier runs': name -> (before, now)
    changed: dict[str, tuple[object, object]] = field(default_factory=dict)

    @property
    def run_options(self) -> JsonObject:
        """The run options a later run keeps (stored with the model's settings)."""
        chosen = asdict(self.backend_settings)
        return {
            name: str(chosen[name]) if isinstance(chosen[name], Path) else chosen[name]
            for name in KEPT_OPTIONS
            if name in self.given and name in chosen
        }

    @property
    def key(self) -> str:
        return self.spec.key

    @property
    def id_suffix(self) -> str:
        """What this model's output ids (and Batch API bookkeeping key) end with."""
        return cast(str, self.settings["id_suffix"])

    @property
    def samples(self) -> int:
        return cast(int, self.settings["samples"])

    @property
    def params(self) -> GenerationParams:
        s = self.settings

        def sent(key: str) -> float:
            # the settings were checked (`_check`) before they were stored
            return cast(float, DEFAULTS[key] if s[key] == OMIT else s[key])

        return GenerationParams(
            temperature=sent("temperature"),
            top_p=sent("top_p"),
            max_tokens=cast(int, s["max_tokens"]),
            seed=None if s["seed"] == OMIT else cast(int | None, s["seed"]),
        )

    def recorded_params(self, extra: JsonObject) -> JsonObject:
        """outputs.params: what was sent (None where omitted), body fields, token parameter.
        A model without any of these keeps the JSON older studies have."""
        params: JsonObject = {**self.params.as_dict(), **{k: None for k in self.omitted}}
        body, _ = request_fields(self.settings)
        if body:
            params["body"] = body
        if self.settings.get("token_param", "max_tokens") != "max_tokens":
            params["token_param"] = self.settings["token_param"]
        return {**params, **extra}

    @property
    def omitted(self) -> frozenset[str]:
        return request_fields(self.settings)[1]


def plan(study: Study, asked: CollectSettings) -> list[ModelRun]:
    """The models of this run with their settings resolved (nothing is written)."""
    stored = stored_models(study)
    backend, options = asked.backend, asked.run_options()
    texts = list(asked.models or ([asked.model] if asked.model else []))
    specs = [_spec(text, backend, stored) for text in texts] or _default_specs(backend, stored)
    keys = [s.key for s in specs]
    if len(set(keys)) < len(keys):
        raise HarnessError(
            f"a model is named twice ({', '.join(keys)}); to run one model under several "
            "settings, label each configuration (MODEL#LABEL, e.g. local#greedy)",
            column="model",
        )
    # MODEL@KEY=VALUE names a model as its --model string or by its key; LABEL@KEY=VALUE
    # names a configuration by its label alone where no other model has that label
    labels = [s.label for s in specs if s.label]
    unique = [x for x in labels if labels.count(x) == 1 and x not in {*texts, *keys}]
    targets = [*texts, *(k for k in keys if k not in texts), *unique]
    scoped = parse_model_args(list(asked.model_args), targets)
    # --base-url serves every OpenAI-compatible model without a MODEL@base_url of its own
    runs = []
    for index, spec in enumerate(specs):
        wanted: JsonObject = {
            **{k: v for k, v in asked.generation().items() if v is not None},
            **scoped.get(None, {}),
            **scoped.get(spec.label or spec.key, {}),
            **scoped.get(spec.key, {}),
            **(scoped.get(texts[index], {}) if texts else {}),
        }
        # with several models, a run-wide option serves the models it applies to
        run_options: dict[str, object] = {
            **{
                k: v
                for k, v in options.items()
                if v is not None and not (len(specs) > 1 and foreign(spec.backend, k))
            },
            **{k: wanted.pop(k) for k in list(wanted) if k in RUN_OPTIONS},
        }
        cost = cast(float | None, run_options.pop("max_cost", asked.max_cost))
        # plain ids only for the first model of a study that holds no outputs yet
        plain = not stored and index == 0 and output_count(study) == 0
        suffix = "" if plain else _suffix(spec.key)
        settings = _settings(study, spec, stored.get(spec.key), wanted, suffix)
        before = _earlier_options(study, spec, stored.get(spec.key))
        kept = {k: v for k, v in before.items() if k not in run_options}
        changed = {
            k: (before[k], v) for k, v in run_options.items() if k in before and before[k] != v
        }
        options = {**kept, **run_options}
        backend_settings = _backend_settings(spec, settings, options)
        runs.append(
            ModelRun(spec, settings, backend_settings, frozenset(options), cost, kept, changed)
        )
    return runs


def _earlier_options(
    study: Study, spec: ModelSpec, before: ModelSettings | None
) -> dict[str, object]:
    """The run options of a model's earlier runs that a rerun keeps: stored with its settings,
    or, for a study collected before they were, the latest its manifest record names."""
    if before is None:
        return {}
    if RUN_OPTIONS_KEY in before:
        found = dict(cast(JsonObject, before[RUN_OPTIONS_KEY]))
    else:
        collect = read_manifest(study).collect
        entry = (collect.models or {}).get(spec.key) if collect is not None else None
        found = entry.record() if entry is not None else {}
    known = option_names(spec.backend)
    return {k: v for k, v in found.items() if k in KEPT_OPTIONS and k in known and v is not None}


def _backend_settings(
    spec: ModelSpec, settings: ModelSettings, run_options: dict[str, object]
) -> BackendSettings:
    """The model's backend settings: this run's options, and for a remote model the request
    body's shape from its stored settings."""
    built = build_settings(spec.backend, run_options)
    if not isinstance(built, OpenAISettings):
        return built
    body, omitted = request_fields(settings)
    return replace(
        built,
        extra_body=body,
        omit=omitted,
        token_param=cast(str, settings.get("token_param", "max_tokens")),
    )


def _spec(text: str, backend: str | None, stored: dict[str, ModelSettings]) -> ModelSpec:
    if backend is None and "/" not in text and text != "local":
        # the older habit: `--model NAME` resumes the study's model of that name
        same = [key for key, s in stored.items() if s.get("model") == text]
        if len(same) == 1:
            return parse_model(same[0])
    return resolve_model(text, backend)


def _default_specs(backend: str | None, stored: dict[str, ModelSettings]) -> list[ModelSpec]:
    """No model named: the study's models (those of `backend` if given), else the default."""
    keys = [k for k in stored if backend is None or parse_model(k).provider == backend]
    if keys:
        return [parse_model(k) for k in keys]
    return [legacy_spec(backend, None)]


def _suffix(key: str) -> str:
    """Output ids of a study's later models carry this; its first model's ids carry none."""
    return hashlib.sha256(key.encode()).hexdigest()[:8]


def _settings(
    study: Study,
    spec: ModelSpec,
    before: ModelSettings | None,
    asked: Mapping[str, JsonValue],
    suffix: str,
) -> ModelSettings:
    """Asked settings, filled in from the model's earlier runs, then from the defaults."""
    before = before or {}
    fixed = output_count(study, spec.key) > 0
    identity = {*IDENTITY_KEYS, *(k for k in {*asked, *before} if k.startswith(EXTRA))}
    settings: ModelSettings = {"backend": spec.backend, "model": spec.name or ""}
    for name in sorted({*DEFAULTS, *identity}):
        value = asked.get(name)
        if value is None:
            value = before.get(name, DEFAULTS.get(name))
        elif fixed and name in identity and value != before.get(name, DEFAULTS.get(name)):
            raise HarnessError(
                f"{spec.key}: this model's outputs were collected with {name}="
                f"{before.get(name, DEFAULTS.get(name))!r}, not {value!r}; rerun with the same "
                "settings to resume, or add it as another model",
                file=study.path,
                column=name,
            )
        if value is not None:
            settings[name] = value
    settings["id_suffix"] = before.get("id_suffix", suffix)
    _check(spec, settings)
    return settings


def _check(spec: ModelSpec, settings: ModelSettings) -> None:
    for name in WHOLE:  # a float such as 2.0 from the Python API would be stored as it is
        value = settings.get(name)
        if value is None or (value == OMIT and name in OMITTABLE):
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise HarnessError(
                f"{spec.key}: {name} must be a whole number (got {value!r}, from this run's "
                "options or the model's stored settings)",
                column=name,
            )
    for name, (low, high) in RANGES.items():
        value = settings.get(name)
        if value not in (None, OMIT) and not low <= cast(float, value) <= high:
            raise HarnessError(
                f"{name} must be between {low:g} and {high:g} (got {value!r})", column=name
            )
    if settings.get("top_p") == 0:
        raise HarnessError("top_p must be above 0 (got 0)", column="top_p")
    if spec.backend == "local":
        remote = [
            k for k in settings if k in REMOTE_ONLY or k.startswith(EXTRA) or settings[k] == OMIT
        ]
        if remote:
            raise HarnessError(
                f"{spec.key}: {remote[0]} applies to OpenAI-compatible models only",
                column=remote[0],
            )
