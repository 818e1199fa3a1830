"""Python's `random` stream, drawn in vectorised blocks: the same numbers in the same order.

`random.Random` is a Mersenne Twister (MT19937) whose `random()` builds a 53-bit double from two
32-bit outputs, exactly as numpy's legacy `RandomState.random_sample` does; the twister's state
moves across unchanged. `random.gauss` is Box-Muller over pairs of `random()` draws, returning the
cosine branch and caching the sine branch for the next call; `gauss` below does the same on whole
arrays, with the C-library cos, sin and log that CPython uses, so every value is bit-identical.

The twister is sequential, but Box-Muller is element-wise: large draws are cut into blocks, the
calling thread draws each block's uniforms while worker threads turn earlier blocks into normals
(numpy releases the GIL in both). The result does not depend on the number of threads.
"""

from __future__ import annotations

import math
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from harness.geometry._pyfloat import libm
from harness.geometry._threads import workers_for

TWOPI = 2.0 * math.pi  # as in random.py
BLOCK_PAIRS = 1 << 16  # Box-Muller pairs per block: 1 MiB of uniforms, stays in cache

Affine = tuple[float, float] | None  # (mu, sigma) applied to the deviates, or None for raw ones


class PythonRandom:
    """A `random.Random(seed)` stream that hands out numpy arrays instead of single floats."""

    def __init__(self, seed: Any = None, *, state: tuple[Any, ...] | None = None) -> None:
        source = random.Random(seed)
        if state is not None:
            source.setstate(state)
        version, internal, self._gauss_next = source.getstate()
        self._twister = np.random.RandomState()
        key = np.asarray(internal[:-1], dtype=np.uint32)
        self._twister.set_state(("MT19937", key, int(internal[-1]), 0, 0.0))
        self._version = version

    @classmethod
    def like(cls, source: random.Random) -> PythonRandom:
        """A stream that continues from where `source` stands now (`source` is left unchanged)."""
        return cls(state=source.getstate())

    def getstate(self) -> tuple[Any, ...]:
        """The state in `random.Random.getstate()` form, so pure-Python code can continue it."""
        _, key, pos, _, _ = self._twister.get_state()
        return (self._version, (*(int(k) for k in key), int(pos)), self._gauss_next)

    def random(self, n: int) -> np.ndarray:
        """The next `n` values of `random.random()`."""
        return self._twister.random_sample(n)

    def gauss(self, n: int, mu: float = 0.0, sigma: float = 1.0) -> np.ndarray:
        """The next `n` values of `random.gauss(mu, sigma)`, bit for bit."""
        z = np.empty(n)
        start = 0
        if n and self._gauss_next is not None:
            z[0], self._gauss_next, start = mu + self._gauss_next * sigma, None, 1
        pairs, odd = divmod(n - start, 2)
        if pairs:
            self._box_muller(pairs, z[start : start + 2 * pairs], (mu, sigma))
        if odd:  # one more pair: its sine branch stays cached, as in random.gauss
            cos, self._gauss_next = self._box_muller(1, np.empty(2), None).tolist()
            z[n - 1] = mu + cos * sigma
        return z

    def _box_muller(self, pairs: int, out: np.ndarray, affine: Affine) -> np.ndarray:
        """2 * pairs normal deviates in the order random.gauss returns them (cos, then sin),
        mapped to mu + z * sigma when `affine` is (mu, sigma)."""
        workers = workers_for(-(-pairs // BLOCK_PAIRS))
        if workers < 2:
            _box_muller_block(self._twister.random_sample(2 * pairs), out, affine)
            return out
        with ThreadPoolExecutor(workers) as pool:
            pending = []
            for start in range(0, pairs, BLOCK_PAIRS):
                stop = min(start + BLOCK_PAIRS, pairs)
                uniforms = self._twister.random_sample(2 * (stop - start))  # in stream order
                pending.append(
                    pool.submit(_box_muller_block, uniforms, out[2 * start : 2 * stop], affine)
                )
            for job in pending:
                job.result()
        return out


def _box_muller_block(u: np.ndarray, out: np.ndarray, affine: Affine) -> None:
    """random.gauss's arithmetic on uniform pairs (u[0::2], u[1::2]), written into `out`."""
    x2pi = np.multiply(u[0::2], TWOPI)
    tails = np.subtract(1.0, u[1::2])
    cos, sin = libm(np.cos, x2pi), libm(np.sin, x2pi)
    log = libm(np.log, tails)
    g2rad = np.sqrt(np.multiply(-2.0, log, out=log), out=log)
    np.multiply(cos, g2rad, out=out[0::2])
    np.multiply(sin, g2rad, out=out[1::2])
    if affine is not None:  # mu + z * sigma: random.gauss's two roundings, even for (0, 1)
        np.multiply(out, affine[1], out=out)
        np.add(out, affine[0], out=out)
