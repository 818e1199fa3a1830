"""Simulation benchmark of the across-models analysis (issue: several models per study).

Prints, over 2,000 simulated 50-topic studies with three models whose base rates differ
(0.1, 0.3, 0.5) and no cross-field effect, the type I error of the pooled relabelling test (target
5% +/- 1.5) and of the per-model tests after Holm (family-wise), and of the model-by-condition
interaction test; then, with an effect of +0.2 in one model of three, how often the interaction
test and the per-model tests find it.

    python benchmarks/bench_models.py [--studies 2000]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from harness.analysis.simulation.several_models import model_batch
from harness.analysis.statistics.across_models import across_models

MODELS = ["a", "b", "c"]


def _rates(studies: int, effects: list[float], rng: np.random.Generator) -> dict[str, float]:
    batch = model_batch(
        studies=studies, topics=50, base_rates=[0.1, 0.3, 0.5], effects=effects, rng=rng
    )
    outs = [across_models(p, MODELS, permutations=2000) for p in batch]
    return {
        "pooled": float(np.mean([o.pooled_p_greater < 0.05 for o in outs])),
        "any model (Holm)": float(np.mean([any(m.supported for m in o.models) for o in outs])),
        "model c (Holm)": float(np.mean([o.models[2].supported for o in outs])),
        "interaction": float(np.mean([(o.interaction_p or 1.0) < 0.05 for o in outs])),
        "median I^2": float(np.median([o.i2 for o in outs])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=2000)
    studies = parser.parse_args().studies
    rng = np.random.default_rng(20261203)
    se = math.sqrt(0.05 * 0.95 / studies)
    for label, effects in (("no effect", [0.0, 0.0, 0.0]), ("+0.2 in model c", [0.0, 0.0, 0.2])):
        start = time.perf_counter()
        rates = _rates(studies, effects, rng)
        print(f"{label} ({studies} studies, 50 topics, base rates 0.1 / 0.3 / 0.5):")
        for name, rate in rates.items():
            print(f"   {name:<18} {rate:6.1%}")
        if label == "no effect":
            ok = 0.035 <= rates["pooled"] <= 0.065
            print(
                f"   requirement: pooled type I 5% +/- 1.5 (MC SE {se:.1%}) -> "
                f"{'PASS' if ok else 'FAIL'}"
            )
        print(f"   ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
