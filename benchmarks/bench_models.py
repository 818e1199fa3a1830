"""Simulation benchmark of the across-models analysis (issue: several models per study).

Over 2,000 simulated 50-topic studies with three models whose base rates differ (0.1, 0.3, 0.5),
for each scenario (no effect; +0.2 in model c; an effect of the SESOI, +0.1, in model c) it
prints the pooled relabelling test, the per-model tests after Holm, the interaction test, and
the study verdict under the plan's `models.primary: per_model` rule (reviewers without error:
the J gate passes and the margin is the SESOI itself, the widest the rule allows, so the false
`refuted` rate is an upper bound). Requirements: pooled type I and the per-model family-wise
false `supported` rate 5% +/- 1.5; false `refuted` with an effect of the SESOI in one model at
most 5%. Then the analytic power of `harness power --models` beside the simulated power.

    python benchmarks/bench_models.py [--studies 2000]
"""

from __future__ import annotations

import argparse
import math
import time
from multiprocessing import Pool

import numpy as np

from harness.analysis.plan.plan_file import load_plan
from harness.analysis.planning.models_power import models_power
from harness.analysis.simulation.several_models import model_batch
from harness.analysis.statistics.across_models import AcrossModels, across_models
from harness.analysis.statistics.model_verdict import decide_per_model, model_verdicts
from harness.analysis.statistics.verdict import AccuracyGate

MODELS = ["a", "b", "c"]
BASE = [0.1, 0.3, 0.5]
GATE = AccuracyGate(True, "reviewers without error")
SCENARIOS = {
    "no effect": [0.0, 0.0, 0.0],
    "+0.2 in model c": [0.0, 0.0, 0.2],
    "+0.1 (SESOI) in model c": [0.0, 0.0, 0.1],
}


def _study(p: np.ndarray) -> tuple[AcrossModels, str]:
    out = across_models(p, MODELS, permutations=2000)
    plan = load_plan().plan
    label = decide_per_model(model_verdicts(out, plan, GATE, 1.0), []).label
    return out, label


def _rates(batch: np.ndarray, workers: int) -> tuple[dict[str, float], list[AcrossModels]]:
    with Pool(workers) as pool:
        done = pool.map(_study, list(batch), chunksize=20)
    outs, labels = [o for o, _ in done], [label for _, label in done]
    return {
        "pooled": float(np.mean([o.pooled_p_greater < 0.05 for o in outs])),
        "any model (Holm)": float(np.mean([any(m.supported for m in o.models) for o in outs])),
        "model c (Holm)": float(np.mean([o.models[2].supported for o in outs])),
        "interaction": float(np.mean([(o.interaction_p or 1.0) < 0.05 for o in outs])),
        "median I^2": float(np.median([o.i2 for o in outs])),
        "per_model supported": float(np.mean([x == "supported" for x in labels])),
        "per_model refuted": float(np.mean([x == "refuted" for x in labels])),
    }, outs


def _formula(outs: list[AcrossModels]) -> tuple[float, float]:
    """Analytic pooled (effect in one model) and per-model power at the simulated mean
    difference of model c (the logit shift, averaged over topic effects, is smaller than its
    nominal size) and the simulated SDs and correlation."""
    d = np.stack([o.differences for o in outs if o.differences is not None])  # (S, T, M)
    effect = float(d[:, :, 2].mean())
    centred = d - d.mean(axis=1, keepdims=True)
    cov = np.einsum("stm,stn->mn", centred, centred) / (d.shape[0] * (d.shape[1] - 1))
    sd = np.sqrt(np.diag(cov))
    corr = cov / np.outer(sd, sd)
    r = float(corr[np.triu_indices(3, 1)].mean())
    common = models_power(
        topics=50,
        effect=effect,
        sd=float(np.sqrt(np.mean(sd**2))),
        models=3,
        correlation=max(0.0, r),
        alpha=0.05,
        target=0.8,
    )
    own = models_power(
        topics=50,
        effect=effect,
        sd=float(sd[2]),
        models=3,
        correlation=max(0.0, r),
        alpha=0.05,
        target=0.8,
    )
    print(
        f"   simulated mean d_t of model c {effect:+.3f}, SD of d_t per model "
        f"{np.round(sd, 3)}, mean correlation {r:.3f}"
    )
    return common.pooled_one_power, own.per_model_power


def _check(label: str, rates: dict[str, float], se: float) -> None:
    if label == "no effect":
        for name in ("pooled", "per_model supported"):
            ok = 0.035 <= rates[name] <= 0.065
            print(
                f"   requirement: {name} type I 5% +/- 1.5 (MC SE {se:.1%}) -> "
                f"{'PASS' if ok else 'FAIL'}"
            )
    if label.startswith("+0.1"):
        ok = rates["per_model refuted"] <= 0.05 + 2 * se
        print(f"   requirement: false refuted at most 5% -> {'PASS' if ok else 'FAIL'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scenario", choices=list(SCENARIOS), help="run this one only")
    args = parser.parse_args()
    rng = np.random.default_rng(20261203)
    se = math.sqrt(0.05 * 0.95 / args.studies)
    for label, effects in SCENARIOS.items():
        if args.scenario not in (None, label):
            continue
        start = time.perf_counter()
        batch = model_batch(
            studies=args.studies, topics=50, base_rates=BASE, effects=effects, rng=rng
        )
        rates, outs = _rates(batch, args.workers)
        print(f"{label} ({args.studies} studies, 50 topics, base rates 0.1 / 0.3 / 0.5):")
        for name, rate in rates.items():
            print(f"   {name:<20} {rate:6.1%}")
        _check(label, rates, se)
        if label.startswith("+0.2"):
            pooled, per_model = _formula(outs)
            print(
                f"   power formula vs simulation: pooled (effect in one model) {pooled:.3f} vs "
                f"{rates['pooled']:.3f}; per model c at alpha/3 {per_model:.3f} vs Holm "
                f"{rates['model c (Holm)']:.3f}"
            )
        print(f"   ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
