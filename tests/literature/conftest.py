"""Fixtures: a loopback literature server, a private response cache, and no secrets by default."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.literature import open_source
from harness.literature.base import Source
from tests.servers.literature_server import LiteratureServer

#: (source name, server route) for the four remote APIs.
REMOTE = [
    ("openalex", "openalex"),
    ("semanticscholar", "s2"),
    ("arxiv", "arxiv"),
    ("crossref", "crossref"),
]

SECRET_ENV = ("OPENALEX_API_KEY", "SEMANTIC_SCHOLAR_API_KEY", "CROSSREF_MAILTO")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in SECRET_ENV:
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENALEX", "ARXIV", "SEMANTICSCHOLAR", "CROSSREF"):
        monkeypatch.delenv(f"HARNESS_{name}_URL", raising=False)
        monkeypatch.delenv(f"HARNESS_{name}_INTERVAL", raising=False)
    monkeypatch.setenv("HARNESS_LITERATURE_CACHE", str(tmp_path / "literature-cache"))


@pytest.fixture
def server() -> Iterator[LiteratureServer]:
    with LiteratureServer() as running:
        yield running


@pytest.fixture
def remote(server: LiteratureServer, tmp_path: Path) -> Callable[..., Source]:
    """Open a remote source on the loopback server: no spacing, small pages, quick backoff."""

    def make(name: str, api: str, **options: Any) -> Source:
        settings: dict[str, Any] = {
            "base_url": server.base(api),
            "interval": 0.0,
            "page_size": 2,
            "cache": tmp_path / "cache",
            "backoff": 0.01,
        }
        settings.update(options)
        return open_source(name, **settings)

    return make


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


CORPUS = [
    {
        "id": "w1",
        "title": "Predictive coding models of river sediment transport",
        "abstract": "We combine predictive coding from neuroscience with sediment transport "
        "equations to forecast riverbed change.",
        "year": 2019,
        "doi": "10.1/w1",
    },
    {
        "id": "w2",
        "title": "Auction theory for spectrum allocation",
        "abstract": "Mechanism design meets wireless spectrum licensing.",
        "year": 2012,
    },
    {
        "id": "w3",
        "title": "Enzyme kinetics as queueing networks",
        "abstract": "Michaelis-Menten kinetics read through queueing theory.",
        "year": 2021,
        "date": "2021-03-04",
    },
    {
        "id": "w4",
        "title": "Sediment transport in braided rivers",
        "abstract": "Field measurements of bedload in gravel rivers.",
        "year": 2005,
    },
    {
        "id": "w5",
        "title": "Graph neural networks for crystal structure prediction",
        "abstract": "Message passing over crystal graphs predicts stable lattices.",
        "year": 2023,
    },
    {"id": "w6", "title": "An undated note on queueing", "abstract": "Queues everywhere."},
]
