"""The seed document's two programs, verbatim, as the reference the vectorised versions must equal.

Only what makes them callable changed: the constants they fix (seed, trials, keys, dimensions,
field names) became parameters with the seed's values as defaults, and each returns the values it
prints (per trial for the scaling program) beside printing them. The arithmetic is untouched.
"""

# ruff: noqa: B905, E501, E741
from __future__ import annotations

import math
import random


def scaling_program(seed=1, trials=200, n_keys=16, dims=(16, 64, 256, 1024)):
    """Seed 000, "why divide by sqrt(d_k)": returns {d: (raw entropies, scaled entropies, means)}."""
    out = {}
    # Why divide by √d_k: dot products of random d-dimensional vectors have variance d,
    # so without scaling the softmax over 16 keys becomes nearly one-hot as d grows.
    random.seed(seed)

    def softmax_entropy(scores):
        m = max(scores)
        w = [math.exp(s - m) for s in scores]
        z = sum(w)
        return -sum((x / z) * math.log2(x / z) for x in w if x > 0)

    for d in dims:
        raw, scaled = [], []
        for _ in range(trials):
            q = [random.gauss(0, 1) for _ in range(d)]
            ks = [[random.gauss(0, 1) for _ in range(d)] for _ in range(n_keys)]
            s = [sum(a * b for a, b in zip(q, k)) for k in ks]
            raw.append(softmax_entropy(s))
            scaled.append(softmax_entropy([x / math.sqrt(d) for x in s]))
        print(
            f"d_k = {d:4d}: attention entropy without scaling {sum(raw) / trials:4.2f} bits, "
            f"with 1/√d_k {sum(scaled) / trials:4.2f} bits (maximum {math.log2(n_keys):.2f})"
        )
        out[d] = (raw, scaled, sum(raw) / trials, sum(scaled) / trials)
    return out


def fields_program(seed=4, D=12, fields=None, per_field=4):
    """Seed 000, the three-field toy model: returns {query name: (weights, per field, entropy, out)}."""
    result = {}
    random.seed(seed)

    def unit(v):
        n = math.sqrt(sum(x * x for x in v))
        return [x / n for x in v]

    # Three "fields", each a cluster of 4 keys around its own direction in a 12-d space.
    fields = fields or {"acoustics": 0, "control theory": 4, "Buddhist texts": 8}
    width = D // len(fields)
    keys, labels = [], []
    for name, start in fields.items():
        centre = [1.0 if start <= i < start + width else 0.0 for i in range(D)]
        for _ in range(per_field):
            keys.append(unit([c + random.gauss(0, 0.25) for c in centre]))
            labels.append(name)
    values = keys  # let each key carry its own content

    def attention(q, scale=3.0):
        """Softmax of scaled dot products. With unit vectors, 'scale' stands in for the
        learned length of the projected queries and keys divided by √d_k."""
        s = [scale * sum(a * b for a, b in zip(q, k)) for k in keys]
        m = max(s)
        w = [math.exp(x - m) for x in s]
        z = sum(w)
        return [x / z for x in w]

    def report(name, q):
        w = attention(q)
        per = {f: sum(wi for wi, l in zip(w, labels) if l == f) for f in fields}
        out = [sum(wi * v[i] for wi, v in zip(w, values)) for i in range(D)]
        print(
            f"{name:34s} weight by field: "
            + ", ".join(f"{f} {per[f]:.2f}" for f in fields)
            + f" | weight entropy {-sum(x * math.log2(x) for x in w):.2f} bits"
        )
        result[name] = (w, per, -sum(x * math.log2(x) for x in w), out)
        return out

    names = list(fields)
    q1 = unit([1.0 if i < width else 0.0 for i in range(D)])  # one field only
    q2 = unit(
        [1.0 if i < width else (1.0 if width <= i < 2 * width else 0.0) for i in range(D)]
    )  # two fields
    q3 = unit([1.0] * D)  # everything at once
    for n, q in (
        (f"query inside {names[0]}", q1),
        (f"query spanning {names[0].split()[0]} + {names[1].split()[0]}", q2),
        ("query with no direction", q3),
    ):
        report(n, q)
    return result


#: What seed 000 prints (the comments under its two programs).
SEED_SCALING_OUTPUT = """\
d_k =   16: attention entropy without scaling 1.40 bits, with 1/√d_k 3.44 bits (maximum 4.00)
d_k =   64: attention entropy without scaling 0.63 bits, with 1/√d_k 3.43 bits (maximum 4.00)
d_k =  256: attention entropy without scaling 0.26 bits, with 1/√d_k 3.40 bits (maximum 4.00)
d_k = 1024: attention entropy without scaling 0.16 bits, with 1/√d_k 3.41 bits (maximum 4.00)"""

SEED_FIELDS_OUTPUT = """\
query inside acoustics             weight by field: acoustics 0.87, control theory 0.07, Buddhist texts 0.07 | weight entropy 2.69 bits
query spanning acoustics + control weight by field: acoustics 0.42, control theory 0.49, Buddhist texts 0.10 | weight entropy 3.31 bits
query with no direction            weight by field: acoustics 0.26, control theory 0.32, Buddhist texts 0.42 | weight entropy 3.53 bits"""
