"""The registry of literature sources: the one table that `open_source`, the settings checks
of `judge --auto` and the CLI read. A source is a `SourceKind` record beside its
implementation, listed in `BUILTIN`; `register_source` adds one at run time."""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.literature import arxiv, crossref, local, openalex, semanticscholar
from harness.literature.base import Source, SourceKind

__all__ = ["SOURCES", "check_source_spec", "open_source", "register_source", "source_kind"]

BUILTIN = (local.SOURCE, openalex.SOURCE, arxiv.SOURCE, semanticscholar.SOURCE, crossref.SOURCE)
#: source name -> record
SOURCES: dict[str, SourceKind] = {s.name: s for s in BUILTIN}


def register_source(kind: SourceKind) -> SourceKind:
    """Add `kind` to the registry (a name already taken is refused)."""
    if kind.name in SOURCES:
        raise ValueError(f"literature source {kind.name!r} is registered already")
    SOURCES[kind.name] = kind
    return kind


def _parse(spec: str, column: str) -> tuple[SourceKind, str]:
    """(record, argument) of a source spec `NAME` or `NAME:ARGUMENT`."""
    name, _, argument = spec.partition(":")
    name = name.strip().lower()
    kind = SOURCES.get(name)
    if kind is None:
        raise HarnessError(
            f"unknown literature source {name!r} (choose from {', '.join(SOURCES)})",
            column=column,
        )
    if argument and kind.argument is None:
        raise HarnessError(f"source {name!r} takes no ':' argument", column=column)
    return kind, argument


def source_kind(spec: str) -> SourceKind:
    """The record of a source spec; an unknown one is a HarnessError naming the choices."""
    return _parse(spec, "source")[0]


def open_source(spec: str, **options: object) -> Source:
    """Open a source by its spec. `NAME:VALUE` sets the source's argument option (`local:PATH`
    is `local` with `corpus=PATH`).

    Options: local - corpus, dense, rerank_depth, k1, b; remote - base_url, interval,
    page_size, cache (True, False or a folder), max_retries, backoff, timeout.
    """
    kind, argument = _parse(spec, "source")
    if argument and kind.argument is not None:
        options.setdefault(kind.argument, argument)
    return kind.open(**options)


def check_source_spec(spec: str, column: str = "--source") -> None:
    """A source spec names a known source (and its argument, a corpus file, exists)."""
    _kind, argument = _parse(spec, column)
    if argument and not Path(argument).exists():
        raise HarnessError("the corpus file does not exist", file=argument, column=column)
