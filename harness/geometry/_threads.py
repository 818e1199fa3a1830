"""Element-wise numpy work spread over the CPUs this process may use.

numpy releases the GIL inside its loops, so plain threads run them in parallel. Work is only ever
split along independent rows or blocks, never inside a sum, so results do not depend on the
number of threads.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from harness.defaults import available_cpus

MAX_WORKERS = 8  # beyond this the sequential random stream, not the arithmetic, sets the pace


def workers_for(jobs: int) -> int:
    """Threads worth starting for `jobs` independent pieces of work."""
    return max(1, min(MAX_WORKERS, available_cpus(), jobs))


def map_rows(
    fn: Callable[[np.ndarray], np.ndarray], array: np.ndarray, min_rows: int = 16
) -> np.ndarray:
    """`fn(array)` computed on blocks of rows in parallel; `fn` must treat rows independently."""
    workers = workers_for(len(array) // min_rows)
    if workers < 2:
        return fn(array)
    with ThreadPoolExecutor(workers) as pool:
        return np.concatenate(list(pool.map(fn, np.array_split(array, 2 * workers))))
