"""What a `collect` run is asked for, as one object built where the options enter.

The command line (`harness collect`), `harness run` and the Python functions
(`harness.collect(...)` keywords, through `CollectSettings.from_keywords`) each build one
`CollectSettings`; the run and its plan (`harness/collection/model_plan.py`) read it. Every option is
None (or empty) where not given: a model's stored settings, its `--model-arg` values or the
defaults then apply. `record()` is the flat keyword form (the names `harness.collect` takes) and
`from_record` reads it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Self, cast

from pydantic import JsonValue

from harness.models.settings import ServerOptions
from harness.study.records import JsonObject

#: The sampling settings a run may ask every model for (a model argument overrides them).
GENERATION = ("samples", "temperature", "top_p", "max_tokens", "seed")
_SERVER = frozenset(f.name for f in fields(ServerOptions))


@dataclass(frozen=True)
class CollectSettings:
    """The options of one `collect` run (the models it serves, what it asks of them, how)."""

    #: provider strings; None: the study's models (or the embedded model in a new study)
    models: tuple[str, ...] | None = None
    #: the older form: a backend name (local, openai or a provider) with a plain `model` name
    backend: str | None = None
    model: str | None = None
    #: `--model-arg` strings: KEY=VALUE, or MODEL@KEY=VALUE for one model
    model_args: tuple[str, ...] = ()
    samples: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    server: ServerOptions = ServerOptions()
    #: the local backend's prompts per batch and CPU threads
    batch_size: int | None = None
    threads: int | None = None
    #: any other backend setting by name (a field of LocalSettings or OpenAISettings)
    backend_options: Mapping[str, object] = field(default_factory=dict)
    #: each model's cost cap in USD (MODEL@max_cost=X sets one model's own)
    max_cost: float | None = None
    retry_errors: bool = False
    #: collect from a server other than the one a model's outputs came from
    new_endpoint: bool = False

    def generation(self) -> dict[str, JsonValue]:
        """The sampling settings asked of every model, None where not given."""
        return {name: getattr(self, name) for name in GENERATION}

    def run_options(self) -> dict[str, object]:
        """The backend options given for this run, by backend settings field name."""
        local = {"batch_size": self.batch_size, "threads": self.threads}
        given = {k: v for k, v in local.items() if v is not None}
        return {**self.server.given(), **given, **self.backend_options}

    def record(self) -> JsonObject:
        """The options given, flat, under the keyword names `harness.collect` takes (lists for
        sequences), so that `from_record` gives these settings back."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "server":
                out.update(self.server.given())
            elif f.name == "backend_options":
                out.update(value)
            elif value != f.default and value is not None:
                out[f.name] = value
        return {k: _as_json(v) for k, v in out.items()}

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Self:
        """The settings a `record()` holds."""
        return cls.from_keywords(**record)

    @classmethod
    def from_keywords(cls, **keywords: Any) -> Self:
        """Settings from keyword values as Python callers pass them (None: not given); a name
        that is no field is a backend option, checked when the backend's settings are built."""
        values: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in keywords.items()
        }
        names = {f.name for f in fields(cls)} - {"server", "backend_options"}
        own = {k: v for k, v in values.items() if k in names}
        if own.get("model_args") is None:
            own.pop("model_args", None)
        server = {k: v for k, v in values.items() if k in _SERVER}
        rest = {k: v for k, v in values.items() if k not in names | _SERVER and v is not None}
        return cls(**own, server=ServerOptions(**server), backend_options=rest)


def _as_json(value: object) -> JsonValue:
    """A given option as the record holds it: sequences as lists (the options are numbers,
    text, flags and URLs)."""
    return cast(JsonValue, list(value) if isinstance(value, tuple) else value)
