"""The two attention experiments of the seed document, reproduced exactly and vectorised.

`scaling_experiment` is the "why divide by sqrt(d_k)" table: mean attention entropy over random
queries and keys without and with the scaling. `fields_experiment` is the three-field toy model:
what one attention step gathers for a query inside one field, one spanning two fields and one with
no direction. Both draw Python's random numbers in the seed programs' order (`PythonRandom`) and
round every operation as CPython does (`_pyfloat`), so any seed prints what the seed program prints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.errors import HarnessError
from harness.geometry._pyfloat import libm, pysum
from harness.geometry._threads import map_rows
from harness.geometry.pyrandom import PythonRandom

if TYPE_CHECKING:
    import pandas as pd

SCALING_SEED = 1
SCALING_TRIALS = 200
SCALING_KEYS = 16
SCALING_DIMS = (16, 64, 256, 1024)

FIELDS_SEED = 4
FIELD_NAMES = ("acoustics", "control theory", "Buddhist texts")
FIELDS_DIMS = 12
FIELDS_KEYS_PER_FIELD = 4
FIELDS_NOISE = 0.25
FIELDS_SCALE = 3.0


# -- the scaling experiment ------------------------------------------------------------------------
@dataclass
class ScalingResult:
    """Per dimension: every trial's scores and entropies (bits), and their means."""

    seed: Any
    trials: int
    keys: int
    dims: tuple[int, ...]
    scores: dict[int, np.ndarray] = field(repr=False)  # d -> (trials, keys) raw dot products
    raw: dict[int, np.ndarray] = field(repr=False)  # d -> (trials,) entropy without scaling
    scaled: dict[int, np.ndarray] = field(repr=False)  # d -> (trials,) entropy with 1/sqrt(d)
    raw_mean: dict[int, float] = field(default_factory=dict)
    scaled_mean: dict[int, float] = field(default_factory=dict)

    @property
    def max_bits(self) -> float:
        return math.log2(self.keys)

    @property
    def table(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(
            {
                "d_k": list(self.dims),
                "entropy_raw_bits": [self.raw_mean[d] for d in self.dims],
                "entropy_scaled_bits": [self.scaled_mean[d] for d in self.dims],
                "max_bits": [self.max_bits] * len(self.dims),
            }
        )

    def lines(self) -> list[str]:
        """The table as the seed program prints it."""
        return [
            f"d_k = {d:4d}: attention entropy without scaling {self.raw_mean[d]:4.2f} bits, "
            f"with 1/√d_k {self.scaled_mean[d]:4.2f} bits (maximum {self.max_bits:.2f})"
            for d in self.dims
        ]

    def summary(self) -> str:
        head = (
            f"Attention entropy over {self.keys} random keys, mean of {self.trials} trials "
            f"(seed {self.seed!r})"
        )
        return "\n".join([head, *self.lines()])


def scaling_experiment(
    seed: Any = SCALING_SEED,
    trials: int = SCALING_TRIALS,
    keys: int = SCALING_KEYS,
    dims: Sequence[int] = SCALING_DIMS,
) -> ScalingResult:
    """Mean entropy of softmax(q.k) and softmax(q.k / sqrt(d)) over random Gaussian q and keys."""
    _check_positive(trials=trials, keys=keys)
    _check_positive(**{f"dims[{i}]": d for i, d in enumerate(dims)})
    if len(set(dims)) != len(dims):
        raise HarnessError(f"dimensions must be distinct, got {list(dims)}", column="dims")
    rng = PythonRandom(seed)
    result = ScalingResult(seed, trials, keys, tuple(dims), {}, {}, {})
    for d in result.dims:
        # per trial the seed draws q (d values), then 16 keys of d values each
        draws = rng.gauss(trials * (keys + 1) * d, 0, 1).reshape(trials, keys + 1, d)
        scores = map_rows(_dot_query, draws)
        result.scores[d] = scores
        result.raw[d] = softmax_entropy_py(scores)
        result.scaled[d] = softmax_entropy_py(scores / math.sqrt(d))
        # the seed averages a Python list: sum() of Python floats, then / trials
        result.raw_mean[d] = sum(result.raw[d].tolist()) / trials
        result.scaled_mean[d] = sum(result.scaled[d].tolist()) / trials
    return result


def _dot_query(draws: np.ndarray) -> np.ndarray:
    """(trials, 1 + keys, d) draws -> (trials, keys) dot products of the query with each key."""
    return pysum(draws[:, :1, :] * draws[:, 1:, :], axis=-1)


def softmax_entropy_py(scores: np.ndarray) -> np.ndarray:
    """Entropy (bits) of softmax over the last axis, rounded as the seed's Python rounds it."""
    shifted = scores - scores.max(axis=-1, keepdims=True)
    w = libm(np.exp, shifted)
    p = w / pysum(w)[..., None]
    positive = w > 0  # the seed skips underflowed weights
    terms = np.where(positive, p * libm(np.log2, np.where(positive, p, 1.0)), 0.0)
    return -pysum(terms)


# -- the three-field toy model ---------------------------------------------------------------------
@dataclass
class FieldsResult:
    """Per query: attention weights over the keys, weight by field, entropy, gathered output."""

    seed: Any
    fields: tuple[str, ...]
    labels: list[str]  # field of each key
    keys: np.ndarray = field(repr=False)  # (n_keys, dims) unit vectors
    queries: dict[str, np.ndarray] = field(repr=False)  # label -> (dims,) unit vector
    weights: dict[str, np.ndarray] = field(repr=False)  # label -> (n_keys,)
    by_field: dict[str, dict[str, float]] = field(default_factory=dict)
    entropy: dict[str, float] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def table(self) -> pd.DataFrame:
        import pandas as pd

        rows = [
            {
                "query": q,
                **{f"weight {f}": self.by_field[q][f] for f in self.fields},
                "entropy_bits": self.entropy[q],
            }
            for q in self.queries
        ]
        return pd.DataFrame(rows)

    def lines(self) -> list[str]:
        """The report as the seed program prints it."""
        width = max(34, *(len(q) for q in self.queries))
        return [
            f"{q:{width}s} weight by field: "
            + ", ".join(f"{f} {self.by_field[q][f]:.2f}" for f in self.fields)
            + f" | weight entropy {self.entropy[q]:.2f} bits"
            for q in self.queries
        ]

    def summary(self) -> str:
        return "\n".join(self.lines())


def fields_experiment(
    seed: Any = FIELDS_SEED,
    fields: Sequence[str] = FIELD_NAMES,
    dims: int = FIELDS_DIMS,
    keys_per_field: int = FIELDS_KEYS_PER_FIELD,
    noise: float = FIELDS_NOISE,
    scale: float = FIELDS_SCALE,
) -> FieldsResult:
    """Keys in one cluster per field; queries inside the first field, across the first two, and
    in no direction. Field i owns dimensions [i*w, (i+1)*w) with w = dims // len(fields)."""
    names = _field_names(fields)
    _check_positive(keys_per_field=keys_per_field)
    width = dims // len(names)
    if width < 1:
        raise HarnessError(f"{dims} dimensions cannot hold {len(names)} fields", column="dims")
    rng = PythonRandom(seed)
    centres = np.stack([_indicator(dims, i * width, (i + 1) * width) for i in range(len(names))])
    noise_draws = rng.gauss(len(names) * keys_per_field * dims, 0, noise)
    raw = np.repeat(centres, keys_per_field, axis=0) + noise_draws.reshape(-1, dims)
    keys = _unit(raw)
    labels = [name for name in names for _ in range(keys_per_field)]
    spanning = f"{names[0].split()[0]} + {names[1].split()[0]}"
    queries = {
        f"query inside {names[0]}": _unit(_indicator(dims, 0, width)),
        f"query spanning {spanning}": _unit(_indicator(dims, 0, 2 * width)),
        "query with no direction": _unit(np.ones(dims)),
    }
    result = FieldsResult(seed, names, labels, keys, queries, {})
    for label, q in queries.items():
        w = _toy_attention(q, keys, scale)
        result.weights[label] = w
        result.by_field[label] = {
            f: float(pysum(w[i * keys_per_field : (i + 1) * keys_per_field]))
            for i, f in enumerate(names)
        }
        result.entropy[label] = float(-pysum(_xlog2x(w)))
        result.outputs[label] = pysum(w[:, None] * keys, axis=0)  # values are the keys
    return result


def _toy_attention(q: np.ndarray, keys: np.ndarray, scale: float) -> np.ndarray:
    """Softmax of scale * q.k over the keys, in the seed's operation order."""
    s = scale * pysum(q * keys, axis=-1)
    w = libm(np.exp, s - s.max())
    result: np.ndarray = w / pysum(w)
    return result


def _xlog2x(w: np.ndarray) -> np.ndarray:
    positive = w > 0
    return np.where(positive, w * libm(np.log2, np.where(positive, w, 1.0)), 0.0)


def _unit(v: np.ndarray) -> np.ndarray:
    """v / |v| along the last axis, the norm summed as the seed's `unit` does."""
    result: np.ndarray = v / np.sqrt(pysum(v * v))[..., None]
    return result


def _indicator(dims: int, start: int, stop: int) -> np.ndarray:
    v = np.zeros(dims)
    v[start:stop] = 1.0
    return v


def _field_names(fields: Sequence[str]) -> tuple[str, ...]:
    names = tuple(f.strip() for f in fields)
    if len(names) < 2:
        raise HarnessError("the toy model needs at least two fields", column="fields")
    if any(not n for n in names) or len(set(names)) != len(names):
        raise HarnessError("field names must be non-empty and distinct", column="fields")
    return names


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if int(value) != value or value < 1:
            raise HarnessError(f"must be a positive whole number, got {value!r}", column=name)
