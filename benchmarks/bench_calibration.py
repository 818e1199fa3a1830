"""Calibration of the primary analysis: type I error on simulated null studies.

Runs the exact primary analysis of the bundled plan on >= 2,000 simulated studies of 50 topics
with no effect, for the planned design and two designs with stronger clustering, and prints its
type I error (target: 5% +/- 1.5 points) beside that of the pooled two-proportion z-test, which
treats judgments as independent and is therefore not the primary test. It then shows what the
literal rule does when the hypothesis is true: with a real effect as large as the SESOI, how
often "no significant difference" would refute it, against the preregistered verdict.

    python benchmarks/bench_calibration.py [--reps 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.analysis.plan.plan_file import Design, load_plan
from harness.analysis.simulation.full_design import (
    latent_parameters,
    rejection_rates,
    simulate_judgments,
)
from harness.analysis.statistics.consensus import code_outcome
from harness.analysis.statistics.equivalence import paired_t
from harness.analysis.statistics.pooled import pooled_test
from harness.analysis.statistics.primary import run_primary

TOPICS, P_SINGLE = 50, 0.3
BAND = (0.035, 0.065)


def scenarios(planned: Design) -> dict[str, Design]:
    return {
        "planned design": planned,
        "3 samples, strong topic x condition and output effects": planned.model_copy(
            update={"samples": 3, "sd_topic_condition": 1.0, "sd_sample": 1.0}
        ),
        "5 reviewers who mostly agree": planned.model_copy(
            update={"reviewers": 5, "sd_noise": 0.2, "sd_sample": 1.0}
        ),
    }


def literal_versus_plan(
    plan, design: Design, effect: float, reps: int, seed: int
) -> tuple[float, float, float]:
    """Share of studies with a true effect that each rule calls refuted, and primary power."""
    mu, beta = latent_parameters(design, P_SINGLE, effect)
    rng = np.random.default_rng(seed)
    alpha = plan.primary.alpha
    literal = preregistered = supported = 0
    for _ in range(reps):
        j = simulate_judgments(design, TOPICS, mu, beta, rng)
        outcome = run_primary(j, plan)
        y = code_outcome(j.verdict, plan.outcome.unsure)
        pooled = pooled_test(y, j.condition, plan.single, plan.literal_rule.alternative)
        literal += not (pooled.p_value < plan.literal_rule.alpha and pooled.difference > 0)
        equivalent = paired_t(outcome.table.d, plan.equivalence.sesoi, alpha).equivalent
        preregistered += outcome.p_greater >= alpha and (outcome.p_less < alpha or equivalent)
        supported += outcome.p_greater < alpha
    return literal / reps, preregistered / reps, supported / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args()
    plan = load_plan().plan
    print(
        f"Null studies: {TOPICS} topics, p_single {P_SINGLE}, no effect; {args.reps} studies "
        f"per design; one-sided alpha {plan.primary.alpha}; primary = {plan.primary.test} "
        f"({plan.primary.p_value} p-value)"
    )
    print(f"{'design':<56} {'primary':>15} {'pooled z-test':>15} {'ratio':>6} {'s':>5}")
    failures = 0
    for seed, (name, design) in enumerate(scenarios(plan.planning.design).items()):
        start = time.perf_counter()
        r = rejection_rates(
            plan,
            design,
            topics=TOPICS,
            p_single=P_SINGLE,
            effect=0.0,
            reps=args.reps,
            seed=1000 + seed,
        )
        ok = BAND[0] <= r.primary <= BAND[1]
        failures += not ok
        print(
            f"{name:<56} {100 * r.primary:6.2f}% +/-{100 * r.primary_se:4.2f} "
            f"{100 * r.pooled:6.2f}% +/-{100 * r.pooled_se:4.2f} "
            f"{r.pooled / max(r.primary, 1e-9):6.2f} {time.perf_counter() - start:5.1f}"
            f"  {'within 5 +/- 1.5' if ok else 'OUTSIDE 5 +/- 1.5'}"
        )
    print(
        "(pooled z-test one-sided at the same alpha, so both columns test the same null; "
        "+/- is the Monte Carlo standard error; ratio = pooled / primary)"
    )
    reps = max(500, args.reps // 2)
    sesoi = plan.equivalence.sesoi
    literal, prereg, power = literal_versus_plan(plan, plan.planning.design, sesoi, reps, 7)
    print(f"\nTrue effect = SESOI ({sesoi:+g}), {TOPICS} topics, planned design, {reps} studies:")
    print(f"  literal rule ('no significant difference' -> refuted): refutes {100 * literal:5.1f}%")
    print(
        f"  preregistered verdict (equivalence or significantly lower): refutes "
        f"{100 * prereg:5.1f}%; supported {100 * power:5.1f}%"
    )
    print(
        f"  ratio of false refutations, literal / preregistered: "
        f"{literal / max(prereg, 1 / reps):.0f}x"
    )
    print("calibration: " + ("PASS" if failures == 0 else f"FAIL ({failures} designs outside)"))


if __name__ == "__main__":
    main()
