"""Simulation benchmark of the verdict with reviewer-accuracy controls, and of the equivalence
tests at the margin. Prints tables and, for each requirement, the measured figure beside it.

Design: the plan's defaults (50 topics, 1 output per prompt, 3 reviewers; latent-scale topic,
condition and output effects), each reviewer judging 30 control items (the plan's share 0.2 of
150 items; half published, half cross-field). Requirements (issue 12):
  1. reviewers who answer `not_published` (or `published`) to everything: `refuted` in 0%;
  2. sensitivity, specificity in {0.6, 0.8, 0.95}, true difference 0, SESOI, 2 x SESOI: the
     corrected estimate's mean bias <= 0.01 and its 95% bootstrap interval covers >= 93%;
  3. `supported` under no effect with non-differential misclassification: 5% +/- 1.5;
  4. differential accuracy (sensitivity 0.8 cross / 0.95 single), no effect: rates of
     `supported` and of the differential flag (printed, no requirement);
  5. equivalence tests: size at the margin (true difference +SESOI and -SESOI) for base rates
     0.02..0.5 must be <= alpha; power when the true difference is 0 is printed beside it;
  6. reviewers who differ: two busy reviewers (J 0.3) take 90% of the real judgments, two
     occasional ones (J 0.9) the rest, 60 controls each, true difference +SESOI: the corrected
     estimate and the rate of `refuted` with accuracy weighted by the share of real judgments
     (what `analyze` does) beside pooled control judgments (which overstate J).

    python benchmarks/bench_controls.py [--studies 2000] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np
from scipy import stats

from harness.analysis.plan.plan_file import Design, load_plan
from harness.analysis.simulation.known_accuracy import (
    Reviewers,
    latent_batch,
    misclassified_batch,
    mixed_reviewers_batch,
)
from harness.analysis.simulation.verdicts import simulate_verdicts
from harness.analysis.statistics.corrected import MIN_J, RELIABLE, inverse_youden
from harness.analysis.statistics.equivalence import betting_capital

PLAN = load_plan().plan
DESIGN = Design()
TOPICS = 50
CONTROLS = 30
ACCURACY = (0.6, 0.8, 0.95)
BASE_RATES = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)


def _mc(rate: float, n: int) -> float:
    return math.sqrt(max(rate * (1 - rate), 1e-12) / n)


def always(studies: int, rng: np.random.Generator) -> None:
    print("\n1. Reviewers who answer the same to everything (true difference 0 and SESOI)")
    print(f"{'answer':>15} {'effect':>7} {'refuted':>8} {'supported':>10} {'gate':>6}")
    worst = 0.0
    for label, sens, spec in (("not_published", 0.0, 1.0), ("published", 1.0, 0.0)):
        for effect in (0.0, PLAN.equivalence.sesoi):
            batch = misclassified_batch(
                DESIGN,
                Reviewers(sens, spec),
                studies=studies,
                topics=TOPICS,
                p_single=0.3,
                effect=effect,
                controls_per_reviewer=CONTROLS,
                rng=rng,
            )
            v = simulate_verdicts(batch, PLAN, rng, resamples=200)
            worst = max(worst, v.refuted.mean())
            print(
                f"{label:>15} {effect:>7.2f} {v.refuted.mean():>8.1%} "
                f"{v.supported.mean():>10.1%} {v.gate.mean():>6.1%}"
            )
    print(
        f"   requirement: refuted in 0% -> measured {worst:.1%} {'PASS' if worst == 0 else 'FAIL'}"
    )


def accuracy_grid(studies: int, rng: np.random.Generator) -> None:
    print(
        "\n2-3. Corrected estimate and verdict rates, non-differential misclassification "
        f"({studies} studies per cell; p_single 0.3)"
    )
    print(
        f"{'sens':>5} {'spec':>5} {'effect':>6} {'J':>5} {'no est':>7} {'bias':>8} "
        f"{'cover':>6} {'supported':>10} {'refuted':>8} {'gate':>6}"
    )
    worst_bias = worst_cover = 0.0
    worst_cover = 1.0
    sizes = []
    for sens, spec in itertools.product(ACCURACY, ACCURACY):
        for effect in (0.0, PLAN.equivalence.sesoi, 2 * PLAN.equivalence.sesoi):
            batch = misclassified_batch(
                DESIGN,
                Reviewers(sens, spec),
                studies=studies,
                topics=TOPICS,
                p_single=0.3,
                effect=effect,
                controls_per_reviewer=CONTROLS,
                rng=rng,
            )
            v = simulate_verdicts(batch, PLAN, rng)
            ok = np.isfinite(v.estimate)
            bias = float(np.mean(v.estimate[ok]) - effect) if ok.any() else math.nan
            cover = float(np.mean((v.ci_low <= effect) & (effect <= v.ci_high)))
            worst_bias = max(worst_bias, abs(bias)) if math.isfinite(bias) else math.inf
            worst_cover = min(worst_cover, cover)
            if effect == 0.0:
                sizes.append(v.supported.mean())
            print(
                f"{sens:>5.2f} {spec:>5.2f} {effect:>6.2f} {sens + spec - 1:>5.2f} "
                f"{1 - ok.mean():>7.1%} {bias:>+8.4f} {cover:>6.1%} {v.supported.mean():>10.1%}"
                f" {v.refuted.mean():>8.1%} {v.gate.mean():>6.1%}"
            )
    print(
        f"   requirement: |mean bias| <= 0.01 -> worst {worst_bias:.4f} "
        f"{'PASS' if worst_bias <= 0.01 else 'FAIL'}"
    )
    print(
        f"   requirement: 95% interval covers >= 93% -> worst {worst_cover:.1%} "
        f"{'PASS' if worst_cover >= 0.93 else 'FAIL'}"
    )
    low, high = min(sizes), max(sizes)
    print(
        f"   requirement: size of supported 5% +/- 1.5 -> {low:.1%} .. {high:.1%} "
        f"(MC SE {_mc(0.05, studies):.1%}) "
        f"{'PASS' if low >= 0.035 and high <= 0.065 else 'FAIL'}"
    )


def differential(studies: int, rng: np.random.Generator) -> None:
    print(
        "\n4. Differential accuracy: sensitivity 0.8 on cross-field, 0.95 on single-field "
        "material (specificity 0.95), no effect"
    )
    batch = misclassified_batch(
        DESIGN,
        Reviewers(0.95, 0.95, sensitivity_cross=0.8),
        studies=studies,
        topics=TOPICS,
        p_single=0.3,
        effect=0.0,
        controls_per_reviewer=CONTROLS,
        rng=rng,
    )
    v = simulate_verdicts(batch, PLAN, rng, resamples=200)
    print(
        f"   supported {v.supported.mean():.1%}; differential check flags "
        f"{v.flagged.mean():.1%}; supported and flagged {np.mean(v.supported & v.flagged):.1%}"
    )


def _t_p(d: np.ndarray, margin: float) -> np.ndarray:
    n = d.shape[1]
    se = d.std(axis=1, ddof=1) / math.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = stats.t.cdf((d.mean(axis=1) - margin) / se, n - 1)
    return np.where(se > 0, p, 1.0)  # zero variance: nothing shown


def _betting_p(d: np.ndarray, margin: float, alpha: float) -> np.ndarray:
    return np.minimum(1.0, 1.0 / betting_capital(d, margin, alpha))


def equivalence(studies: int, rng: np.random.Generator) -> None:
    alpha, m = PLAN.primary.alpha, PLAN.equivalence.sesoi
    print(
        f"\n5. Equivalence tests at the margin (latent design, {TOPICS} topics, 3 reviewers, "
        f"{studies} studies per cell; alpha {alpha:g}): rejection of H0 |diff| >= {m:g}"
    )
    print(
        f"{'base':>5} {'side':>5} {'paired_t':>9} {'betting':>8}   power at 0: "
        f"{'paired_t':>9} {'betting':>8}"
    )
    worst = {"paired_t": 0.0, "betting": 0.0}
    for base in BASE_RATES:
        power = {}
        d0 = latent_batch(
            DESIGN, studies=studies, topics=TOPICS, p_single=base, effect=0.0, rng=rng
        )
        power["paired_t"] = np.mean((_t_p(d0, m) < alpha) & (_t_p(-d0, m) < alpha))
        power["betting"] = np.mean(
            (_betting_p(d0, m, alpha) < alpha) & (_betting_p(-d0, m, alpha) < alpha)
        )
        for side in ("+", "-"):
            # +: cross above single by the margin; -: single above cross by it
            p_single, effect = (base, m) if side == "+" else (base + m, -m)
            d = latent_batch(
                DESIGN, studies=studies, topics=TOPICS, p_single=p_single, effect=effect, rng=rng
            )
            d = d if side == "+" else -d
            t_rate = float(np.mean(_t_p(d, m) < alpha))
            b_rate = float(np.mean(_betting_p(d, m, alpha) < alpha))
            worst["paired_t"] = max(worst["paired_t"], t_rate)
            worst["betting"] = max(worst["betting"], b_rate)
            extra = f"   {power['paired_t']:>20.1%} {power['betting']:>8.1%}" if side == "+" else ""
            print(f"{base:>5.2f} {side:>5} {t_rate:>9.1%} {b_rate:>8.1%}{extra}")
    se = _mc(alpha, studies)
    for name, rate in worst.items():
        print(
            f"   {name}: worst size at the margin {rate:.1%} (MC SE {se:.1%}) -> "
            f"{'PASS' if rate <= alpha + 2 * se else 'FAIL'} (<= alpha)"
        )


def _relative_bias(sens: float, spec: float, n: int, estimator: str) -> tuple[float, float, float]:
    """E[estimate] / truth - 1 by exact enumeration of n + n control judgments (the estimate
    is d x g(J-hat), d independent of the controls; no estimate when J-hat <= MIN_J), the
    share of studies without an estimate, and the share of estimates flagged unreliable.
    `estimator`: "plain" 1/J-hat, "second" J / (J^2 + v) always, "ours" what analyze uses."""
    k = np.arange(n + 1)
    prob = np.outer(stats.binom.pmf(k, n, sens), stats.binom.pmf(k, n, spec))
    s, p = k[:, None] / n, k[None, :] / n
    j_hat = s + p - 1.0
    var = s * (1 - s) / n + p * (1 - p) / n
    ok = j_hat > MIN_J
    ours, reliable = inverse_youden(j_hat, var)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = {"plain": 1.0 / j_hat, "second": j_hat / (j_hat**2 + var), "ours": ours}[estimator]
    mean = float((prob * np.where(ok, g, 0.0)).sum() / (prob * ok).sum())
    flagged = float((prob * (ok & ~reliable)).sum() / (prob * ok).sum())
    return mean * (sens + spec - 1.0) - 1.0, float((prob * ~ok).sum()), flagged


def bias_by_controls(studies: int, rng: np.random.Generator) -> None:
    del studies, rng  # exact enumeration
    effect = 2 * PLAN.equivalence.sesoi
    print(
        f"\n2b. Bias of the corrected estimate at a true difference of {effect:g} by the number "
        "of control judgments per kind (exact enumeration; pooled over reviewers); 'estimate' "
        f"is J / (J^2 + v) where v / J-hat^2 <= {RELIABLE:g}, else 1/J-hat flagged unreliable"
    )
    print(
        f"{'sens':>5} {'spec':>5} {'J':>5} {'n+n':>8} {'1/J-hat':>9} {'2nd order':>10} "
        f"{'estimate':>9} {'flagged':>8} {'no est':>7}"
    )
    for sens, spec in ((0.6, 0.6), (0.6, 0.8), (0.6, 0.95)):
        for n in (45, 90, 135, 180, 270):
            plain = _relative_bias(sens, spec, n, "plain")[0]
            second = _relative_bias(sens, spec, n, "second")[0]
            ours, missing, flagged = _relative_bias(sens, spec, n, "ours")
            print(
                f"{sens:>5.2f} {spec:>5.2f} {sens + spec - 1:>5.2f} {f'{n}+{n}':>8} "
                f"{plain * effect:>+9.4f} {second * effect:>+10.4f} {ours * effect:>+9.4f} "
                f"{flagged:>8.1%} {missing:>7.1%}"
            )


def mixed_reviewers(studies: int, rng: np.random.Generator) -> None:
    sesoi = PLAN.equivalence.sesoi
    print(
        f"\n6. Reviewers who differ (2 x J 0.3 with 90% of the real judgments, 2 x J 0.9; 60 "
        f"controls each; true difference +{sesoi:g}, p_single 0.3; {studies} studies)"
    )
    print(
        f"{'topics':>6} {'weighting':>10} {'mean est':>9} {'bias':>8} {'gate':>6} "
        f"{'refuted':>8} {'supported':>10}"
    )
    for topics in (400, 1000):
        batch = mixed_reviewers_batch(
            DESIGN,
            [(0.65, 0.65)] * 2 + [(0.95, 0.95)] * 2,
            [0.45, 0.45, 0.05, 0.05],
            [60] * 4,
            studies=studies,
            topics=topics,
            p_single=0.3,
            effect=sesoi,
            rng=rng,
        )
        for weighting in ("shares", "controls"):
            v = simulate_verdicts(batch, PLAN, rng, resamples=200, weighting=weighting)
            est = float(np.nanmean(v.estimate))
            print(
                f"{topics:>6} {weighting:>10} {est:>+9.4f} {est - sesoi:>+8.4f} "
                f"{v.gate.mean():>6.1%} {v.refuted.mean():>8.1%} {v.supported.mean():>10.1%}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="200 studies per cell")
    parser.add_argument("--only", nargs="*", help="run only these parts (function names)")
    args = parser.parse_args()
    studies = 200 if args.quick else args.studies
    rng = np.random.default_rng(20261202)
    parts = (always, accuracy_grid, bias_by_controls, differential, equivalence, mixed_reviewers)
    for part in parts:
        if args.only and part.__name__ not in args.only:
            continue
        start = time.perf_counter()
        part(studies, rng)
        print(f"   ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
