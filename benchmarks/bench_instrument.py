"""Simulation benchmark of the verdict's instrument: the rule with the adjudicators measured
(betting tests over the study's topics, J gate, SESOI x J's lower bound) beside the landed rule
(PPI++ with a t reference, adjudicators not measured), in studies where the adjudicators are
imperfect, lazy or wrong, novelty is rare, topics are few or cluster by domain pair.

Families (`harness.analysis.simulation.instrument`, each from its own generator): topics 50, 100,
363 with a quarter adjudicated; single-field novelty 0.05, 0.10, 0.30 with Beta-like
heterogeneity across topics; adjudicators at sensitivity = specificity 0.9, two per item (mean)
and three (majority); two models x two samples per prompt; domain-pair clusters with shared
effects (the bank's six strata); errors shared by both tiers and differential by condition;
adjudicators who judge by topic; adjudicators who find one topic novel. Per cell and rule:
size of `supported` at a true 0, `refuted` at a true +SESOI (0.10), the lowest coverage of the
true (error-free) difference over true 0, +0.10 and +0.20 (the measured rule's interval is the
adjudicated one divided by J's, as the report gives it), power of `supported` at +0.20 and of
`refuted` at 0. Goals for the measured rule in every cell: supported at 0 at most 6.5%, refuted
at +SESOI at most 5%, coverage at least 93%. Then the power of `refuted` at 0 on the bank with
more of it adjudicated, which is what a decisive refutation costs under the measured rule.

    python benchmarks/bench_instrument.py [--studies 2000] [--quick] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import replace

import numpy as np

from harness.analysis.plan.plan_file import load_plan
from harness.analysis.simulation.instrument import (
    Batch,
    Decisions,
    Scenario,
    landed_rule,
    measured_rule,
    simulate,
)

PLAN = load_plan().plan
ALPHA, SESOI = PLAN.primary.alpha, PLAN.equivalence.sesoi
MIN_J = PLAN.controls.min_youden
EFFECTS = (0.0, SESOI, 0.2)

CELLS = [
    *(
        Scenario(f"{n} topics, base {b:.2f}", topics=n, base=b)
        for n in (50, 100, 363)
        for b in (0.05, 0.10, 0.30)
    ),
    Scenario("363, 3 adjudicators, majority", adjudicators=3, combine="majority"),
    Scenario("50, base 0.05, 2 models x 2 samples", topics=50, base=0.05, models=2, samples=2),
    Scenario("363, domain-pair clusters", clustered=True),
    Scenario("50, domain-pair clusters", topics=50, clustered=True),
    Scenario("100, shared differential +0.10", topics=100, mode="differential", differential=0.1),
    Scenario("363, shared differential +0.10", mode="differential", differential=0.1),
    Scenario(
        "363, shared differential, 2000 controls",
        mode="differential",
        differential=0.1,
        controls=2000,
    ),
    Scenario("363 topics, base 0.30, 2000 controls", controls=2000),
    Scenario("363, adjudicators judge by topic", mode="by_topic"),
    Scenario("363, adjudicators find one topic", mode="one_topic"),
    Scenario("363, adjudicators' own rule, 1% novel", mode="own_rule", own_rate=0.01),
    Scenario("363, adjudicators' own rule, 5% novel", mode="own_rule", own_rate=0.05),
    Scenario("100, adjudicators' own rule, 1% novel", topics=100, mode="own_rule"),
]
VALUE = [Scenario(f"363, {s:.0%} adjudicated", share=s) for s in (0.25, 0.5, 1.0)]


class Rates:
    def __init__(self) -> None:
        self.size = self.refuted_sesoi = self.power = self.refuted_null = math.nan
        self.coverage = 1.0

    def add(self, effect: float, d: Decisions) -> None:
        self.coverage = min(self.coverage, float(d.covered.mean()))
        if effect == 0.0:
            self.size, self.refuted_null = float(d.supported.mean()), float(d.refuted.mean())
        elif effect == SESOI:
            self.refuted_sesoi = float(d.refuted.mean())
        else:
            self.power = float(d.supported.mean())

    def text(self) -> str:
        values = (self.size, self.refuted_sesoi, self.coverage, self.power, self.refuted_null)
        return " ".join(f"{v:>6.1%}" for v in values)

    def meets(self, studies: int) -> bool:
        """Goals, each judged within two Monte Carlo standard errors."""
        se = 2 * math.sqrt(0.05 * 0.95 / studies)
        return (
            self.size <= 0.065 + se
            and self.refuted_sesoi <= 0.05 + se
            and self.coverage >= 0.93 - se
        )


def run_cell(
    cell: Scenario, studies: int, rng: np.random.Generator, estimand: str
) -> tuple[Rates, Rates, Rates]:
    landed, measured, required = Rates(), Rates(), Rates()
    for effect in EFFECTS:
        batch: Batch = simulate(cell, effect, studies, rng)
        landed.add(effect, landed_rule(batch, ALPHA, SESOI))
        decided = measured_rule(batch, ALPHA, SESOI, MIN_J, estimand=estimand)
        measured.add(effect, decided)
        assert decided.robust is not None
        required.add(effect, replace(decided, supported=decided.robust))
    return landed, measured, required


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="300 studies per cell")
    parser.add_argument("--only", nargs="*", default=None, help="cells whose name contains these")
    parser.add_argument("--seed", type=int, default=20261206)
    parser.add_argument("--estimand", default="topic_population")
    args = parser.parse_args()
    studies = 300 if args.quick else args.studies
    rng = np.random.default_rng(args.seed)
    cells = [c for c in CELLS if not args.only or any(o in c.name for o in args.only)]
    print(
        f"{studies} studies per cell and true difference; alpha {ALPHA}, SESOI {SESOI}; "
        f"estimand of the measured rule: {args.estimand}"
    )
    print("columns: supported at 0 | refuted at +SESOI | min coverage | supported at +0.2 | ")
    print("         refuted at 0; goals (measured rule): <= 6.5% | <= 5% | >= 93%")
    header = (
        f"{'cell':<40} {'rule':<9} {'sup0':>6} {'refS':>6} {'cover':>6} {'pow.2':>6} {'ref0':>6}"
    )
    print(header)
    failed = []
    for cell in cells:
        start = time.perf_counter()
        landed, measured, required = run_cell(cell, studies, rng, args.estimand)
        ok = measured.meets(studies)
        failed += [] if ok else [cell.name]
        seconds = time.perf_counter() - start
        print(f"{cell.name:<40} {'landed':<9} {landed.text()}")
        print(
            f"{'':<40} {'measured':<9} {measured.text()}  {'ok' if ok else 'MISSED'} ({seconds:.0f} s)"
        )
        mark = "ok" if required.meets(studies) else "MISSED"
        print(f"{'':<40} {'require':<9} {required.text()}  {mark}")
    if not args.only:
        print(
            "\nOn the bank (363 topics, base 0.30) by the share adjudicated: refuted at a true 0 /"
            " supported at a true 0 / coverage at 0, for the measured rule with each estimand"
        )
        for cell in VALUE:
            batch = simulate(cell, 0.0, studies, rng)
            out = []
            for estimand in ("topic_population", "study_topics"):
                m = measured_rule(batch, ALPHA, SESOI, MIN_J, estimand=estimand)
                out.append(
                    f"{estimand} {m.refuted.mean():>6.1%} / {m.supported.mean():>5.1%} / "
                    f"{m.covered.mean():>6.1%}"
                )
            t = landed_rule(batch, ALPHA, SESOI)
            print(f"  {cell.name:<20} " + "   ".join(out) + f"   landed {t.refuted.mean():>6.1%}")
    print("\ncells that missed a goal:", ", ".join(failed) if failed else "none")


if __name__ == "__main__":
    main()
