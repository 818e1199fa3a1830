"""Shared test set-up: offline libraries and a project-local cache for converted models.

Under pytest-xdist (`make test`) each worker gets its own cache folder: two workers converting
the embedded tokenizer at once would race to rename their copies into the same place.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_WORKER = os.environ.get("PYTEST_XDIST_WORKER")  # gw0, gw1, ... ; unset in a serial run
_CACHE = REPO / ".cache" / (f"harness-{_WORKER}" if _WORKER else "harness")
os.environ.setdefault("HARNESS_CACHE", str(_CACHE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
