"""The settings of the judge stage: one frozen object per stage, built once where they enter.

`harness judge --blind`, `harness run` and Python (`harness.blind(study, k=3)`) each build one
`BlindSettings`; `judge --auto` and `--calibrate` (and `harness.run_automated`) one
`AutoSettings`. The stage functions read nothing else. Building checks every value that needs no
study, so a refusal comes before the study is locked or written. `record()` is the command entry
the manifest keeps (once the stage has filled in the defaults it settled: seed, stored cut-off,
plan), and `from_record` rebuilds the settings from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from harness.judge.cutoff import normalise_cutoff
from harness.judge.judge_defaults import DEFAULT_K
from harness.judge.server_options import judge_server, server_from_record, server_record
from harness.judge.settings_checks import check_auto_settings
from harness.models.providers import ModelSpec, resolve_model
from harness.models.settings import ServerOptions
from harness.study.records import JsonObject

if TYPE_CHECKING:
    from harness.models.base import ModelAPI

#: the literature source of `judge --auto` when none is named: the demonstration corpus
DEFAULT_SOURCES = ("local",)

S = TypeVar("S", "BlindSettings", "AutoSettings")


@dataclass(frozen=True)
class BlindSettings:
    """Everything `blind` takes besides the study (`harness judge --blind`)."""

    #: roster YAML; None: the roster already stored in the study
    reviewers: str | Path | None = None
    #: distinct reviewers per item
    k: int = DEFAULT_K
    #: seed of the routing and the leak audits; None: the harness default seed
    seed: int | None = None
    #: the blinded steps: extract each output's core combination, rewrite it in a neutral style
    extract: bool = True
    normalise: bool = True
    #: backend of the blinded steps: "local", "openai", or an opened backend object
    backend: str | ModelAPI = "local"
    #: the model's provider string (None: the embedded model)
    model: str | None = None
    #: publication-date cut-off, YYYY-MM-DD (a year is read as its 31 December)
    cutoff: str | None = None
    #: a human reviewer sees at most one item per topic
    distinct_topics: bool = True
    #: folder of the reviewer texts; None: the bundled judging/
    judging: str | Path | None = None
    #: controls file (YAML), and whether the bank's known links make control items too
    controls: str | Path | None = None
    bank_controls: bool = True
    #: analysis plan whose `controls:` numbers apply; None: the preregistered or bundled one
    plan: str | Path | None = None
    #: blind a study whose collect is unfinished (outputs collected later are never reviewed)
    review_what_exists: bool = False
    server: ServerOptions = field(default_factory=ServerOptions)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cutoff", normalise_cutoff(self.cutoff))
        judge_server(self.server, self.backend)

    @classmethod
    def from_options(
        cls,
        *,
        backend: str | ModelAPI | None = None,
        model: str | None = None,
        base_url: str | None = None,
        concurrency: int | None = None,
        **options: Any,
    ) -> BlindSettings:
        """The settings from keyword options as `blind(study, **options)` takes them.

        The model is a provider string (`model="openai/gpt-4o-mini"`, `"local"`), or the older
        `backend=` and `model=` pair (still read, with a one-line deprecation note), or
        `backend=` an opened backend object (`model` is then recorded as given).
        """
        if backend is None or isinstance(backend, str):
            backend, model = _blind_model(model, backend)
        server = ServerOptions(base_url=base_url, concurrency=concurrency)
        return cls(backend=backend, model=model, server=server, **options)

    def record(self) -> JsonObject:
        """The parameters of the manifest's `judge.blind` command entry."""
        return {
            "reviewers": str(self.reviewers) if self.reviewers else None,
            "k": self.k,
            "seed": self.seed,
            "extract": self.extract,
            "normalise": self.normalise,
            "model": self.model,
            "cutoff": self.cutoff,
            "backend": self.backend if isinstance(self.backend, str) else self.backend.name,
            "distinct_topics": self.distinct_topics,
            "judging": _text(self.judging),
            "controls": _text(self.controls),
            "bank_controls": self.bank_controls,
            "plan": _text(self.plan),
            "review_what_exists": self.review_what_exists,
            **server_record(self.server),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Self:
        """The settings a `record()` was made from (the server URL as recorded, without
        credentials; an opened backend as its name)."""
        return cls(
            reviewers=cast("str | None", record["reviewers"]),
            k=cast("int", record["k"]),
            seed=cast("int | None", record["seed"]),
            extract=cast("bool", record["extract"]),
            normalise=cast("bool", record["normalise"]),
            backend=cast("str", record["backend"]),
            model=cast("str | None", record["model"]),
            cutoff=cast("str | None", record["cutoff"]),
            distinct_topics=cast("bool", record["distinct_topics"]),
            judging=cast("str | None", record["judging"]),
            controls=cast("str | None", record["controls"]),
            bank_controls=cast("bool", record["bank_controls"]),
            plan=cast("str | None", record["plan"]),
            review_what_exists=cast("bool", record["review_what_exists"]),
            server=server_from_record(record),
        )


@dataclass(frozen=True)
class AutoSettings:
    """Everything the automated reviewers take besides the study (`harness judge --auto` and
    `--calibrate`; `harness.run_automated`, `harness.calibrate_automated`)."""

    #: literature source specs for `harness.literature.open_source`
    sources: tuple[str, ...] = DEFAULT_SOURCES
    #: match score for a `published` verdict, fixed instead of calibrated (--auto only)
    threshold: float | None = None
    #: publication-date cut-off; None: the one `judge --blind` stored (another one is refused)
    cutoff: str | None = None
    #: search queries per item
    max_queries: int = 3
    #: provider of the roster's bare `llm:` model names (an older spelling); None: none
    backend: str | None = None
    server: ServerOptions = field(default_factory=ServerOptions)
    #: store reviews made after the unblinding, marked as such (--auto only)
    after_unblinding: bool = False
    #: automated reviewers whose reviews are kept although their share of `unsure` passes the
    #: plan's limit (`outcome.max_unsure_share`; --auto only)
    accept_unsure: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", tuple(self.sources) or DEFAULT_SOURCES)
        accept: str | tuple[str, ...] = self.accept_unsure  # one id alone is a str
        accept = (accept,) if isinstance(accept, str) else accept
        object.__setattr__(self, "accept_unsure", tuple(dict.fromkeys(accept or ())))
        server = judge_server(self.server, "openai")  # checked against the backend below
        check_auto_settings(
            backend=self.backend,
            sources=list(self.sources),
            threshold=self.threshold,
            max_queries=self.max_queries,
            **server,
        )
        object.__setattr__(self, "cutoff", normalise_cutoff(self.cutoff))

    @classmethod
    def from_options(
        cls,
        *,
        sources: Iterable[str] | None = None,
        base_url: str | None = None,
        concurrency: int | None = None,
        **options: Any,
    ) -> AutoSettings:
        """The settings from keyword options as `run_automated(study, **options)` takes them
        (`sources` None or empty: the demonstration corpus)."""
        if isinstance(sources, str):  # one source named alone
            sources = [sources]
        server = ServerOptions(base_url=base_url, concurrency=concurrency)
        return cls(sources=tuple(sources or DEFAULT_SOURCES), server=server, **options)

    def record(self) -> JsonObject:
        """The parameters of the manifest's `judge --auto` and `judge --calibrate` entries
        (`--auto` adds each reviewer's rule, which holds the threshold it decided by)."""
        return {
            "sources": list(self.sources),
            "cutoff": self.cutoff,
            "max_queries": self.max_queries,
            "backend": self.backend,
            **server_record(self.server),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Self:
        """The settings a `record()` was made from (`threshold`, `after_unblinding` and
        `accept_unsure` are not part of it: they take their defaults)."""
        return cls(
            sources=tuple(cast("list[str]", record["sources"])),
            cutoff=cast("str | None", record["cutoff"]),
            max_queries=cast("int", record["max_queries"]),
            backend=cast("str | None", record["backend"]),
            server=server_from_record(record),
        )


def settings_or_options(kind: type[S], settings: S | None, options: dict[str, Any]) -> S:
    """`settings` as given, else `kind` built from keyword options (never both)."""
    if settings is None:
        return kind.from_options(**options)
    if options:
        raise TypeError(f"give a {kind.__name__} or keyword options, not both: {sorted(options)}")
    if not isinstance(settings, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(settings).__name__}")
    return settings


def _blind_model(model: str | None, backend: str | None) -> tuple[str, str | None]:
    """(backend name, provider string or None) of the blinded steps' model, read by the one
    resolver (`harness.models.providers.resolve_model`) with Python spellings in its notes.
    Without `backend`, a bare model name is a local one, as `blind` always read it."""
    if not model and backend in (None, "local"):
        spec = ModelSpec("local", None)
    else:
        old = f"model={model!r}" if backend is None else f"backend={backend!r}, model={model!r}"
        spec = resolve_model(
            model or "", backend or "local", spell=lambda text: f"model={text!r}", old=old
        )
    return spec.backend, None if spec.key == "local" else spec.key


def _text(path: str | Path | None) -> str | None:
    return None if path is None else str(path)
