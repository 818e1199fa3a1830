"""The demonstration corpus: the topic bank's `known_links` as a tiny searchable collection.

It lets the whole pipeline run offline, and it is labelled as what it is in every record and
in every search record made against it: a demonstration, not a literature database. A verdict
of `not_published` against it means only "not among the bank's known links".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import cast

from pydantic import JsonValue

from harness.literature.corpus import Corpus, Row, load_corpus
from harness.materials.bank import load_topic_bank
from harness.materials.topics import KnownLink, Topic
from harness.study.manifest import sha256_file

NAME = "demo-known-links"
DESCRIPTION = (
    "DEMONSTRATION CORPUS built from the topic bank's known_links (published works that "
    "combine each topic's two fields). It is not a literature database: use it to run the "
    "pipeline offline, never to support a finding."
)


#: A topic (or known link) as a model of the topic bank or as its plain record.
Entry = Topic | KnownLink | Mapping[str, object]


def _get(obj: Entry, key: str) -> object:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def corpus_records(topics: Sequence[Entry]) -> list[Row]:
    """One record per distinct known link (same DOI, or same title and year, counted once).

    Ids are opaque (a hash of the work), so a hit never names the topic it came from.
    """
    records: dict[str, Row] = {}
    for topic in topics:
        for link in cast("list[Entry]", _get(topic, "known_links") or []):
            title = " ".join(str(_get(link, "title")).split())
            year = _get(link, "year")
            doi = _get(link, "doi")
            identity = (str(doi or "") or f"{title.casefold()}|{year}").strip().lower()
            if identity in records:
                continue
            digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
            records[identity] = {
                "id": f"demo-{digest}",
                "title": title,
                "abstract": _get(link, "summary"),
                "year": year,
                "doi": doi,
                "venue": _get(link, "venue"),
                "demonstration": True,
            }
    return sorted(records.values(), key=lambda r: str(r["id"]))


def build_demo_corpus(topics: Sequence[Entry], built_from: list[str] | None = None) -> Corpus:
    corpus = load_corpus(corpus_records(topics), name=NAME)
    built: list[JsonValue] = [*(built_from or [])]
    corpus.meta = {
        "demonstration": True,
        "name": NAME,
        "description": DESCRIPTION,
        "built_from": built,
    }
    return corpus


@lru_cache(maxsize=4)
def demo_corpus(bank: Path | None = None) -> Corpus:
    """The demonstration corpus of a topic bank (None = the bundled bank)."""
    loaded = load_topic_bank(bank)
    built_from = [f"{f.name} sha256:{sha256_file(f)}" for f in loaded.files]
    return build_demo_corpus(loaded.topics, built_from)


def write_demo_corpus(path: str | Path, bank: Path | None = None) -> Path:
    """Write the demonstration corpus as JSON Lines with its `.meta.json` label beside it."""
    corpus = demo_corpus(bank)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = corpus_records(_topics(bank))
    out.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    out.with_name(out.name + ".meta.json").write_text(
        json.dumps(corpus.meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return out


def _topics(bank: Path | None) -> list[Topic]:
    return load_topic_bank(bank).topics
