"""Simulation benchmark of the verdict's rule: size, coverage of the true difference and power,
beside the idealised reference, in studies where the adjudicators are imperfect, lazy or wrong,
novelty is rare, topics are few or cluster by domain pair.

The rule is the bundled plan's (`adjudication.interval: auto`): from `finite_below` adjudicated
topics on, PPI++ with a t reference and `refuted` by the joint test of the true difference
(`statistics.joint`: theta - SESOI x J with J's uncertainty, at alpha, after the gate on J's
Newcombe bound); below, betting tests with the SESOI times J's exact bound (alpha / 2 each).
The reference knows the adjudicators' true J and uses the adjudicated topics alone: t tests,
`refuted` by TOST against SESOI x J at alpha (defined where the adjudicators are accurate).

Families (`harness.analysis.simulation.instrument`, each from its own generator): topics 50, 100,
363 with a quarter adjudicated; single-field novelty 0.05, 0.10, 0.30 with heterogeneity across
topics; adjudicators at sensitivity = specificity 0.9, two per item (mean) and three (majority);
two models x two samples per prompt; domain-pair clusters (the bank's six pairs, effects fixed
as the estimand's strata); errors shared by both tiers and differential by condition;
adjudicators who judge by topic, find one topic novel or follow a rule of their own. Then the
decisive designs the issue names. Per cell: `supported` at a true 0 (size), `refuted` at a true
+SESOI, the lowest coverage over true 0, +0.10 and +0.20 of the verdict's interval the report
prints (where the plan requires robustness to differential error, the true difference corrected
for it, Fieller's 95% interval, which `refuted` reads; else Fieller's 95% interval of theta / J;
the betting rule's joined 95% parts), `supported`
at +0.10 and +0.20 and `refuted` at 0, with the reference's and the rule's share of it; then
`supported` at 0 and +0.10 under the other `adjudication.differential_error` mode. `supported`
is the plan's: under `require` (the bundled plan) also robust to the adjudicators' differential
error (`statistics.differential_error`). The truth
is the population difference over topics like the study's (its domain pairs fixed), not the
study's realised one. Goals in every cell: supported at 0 at most 6.5%, refuted at +SESOI at most
5%, coverage at least 93% (each within two Monte Carlo SE).

    python benchmarks/bench_instrument.py [--studies 2000] [--quick] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import replace

import numpy as np

from harness.analysis.plan.plan_file import load_plan
from harness.analysis.planning.design_power import sd_for_rho
from harness.analysis.simulation.instrument import (
    Decisions,
    Scenario,
    auto_rule,
    reference_rule,
    simulate,
)

PLAN = load_plan().plan
ALPHA, SESOI = PLAN.primary.alpha, PLAN.equivalence.sesoi
MIN_J = PLAN.controls.min_youden
# `auto` requires robustness wherever the controls measure the error, as the simulated ones all do
REQUIRE = PLAN.adjudication.differential_error in ("auto", "require")
FINITE = PLAN.adjudication.finite_below
EFFECTS = (0.0, SESOI, 0.2)
SD_PLANNED = sd_for_rho(PLAN.planning.p_single, PLAN.planning.rho)

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
    Scenario("50 all adjudicated, clusters", topics=50, share=1.0, clustered=True),
    Scenario("100, shared differential +0.10", topics=100, mode="differential", differential=0.1),
    Scenario("363, shared differential +0.10", mode="differential", differential=0.1),
    Scenario(
        "363, shared differential, 2000 controls",
        mode="differential",
        differential=0.1,
        controls=2000,
    ),
    Scenario(
        "363, majority, shared differential",
        adjudicators=3,
        combine="majority",
        mode="differential",
        differential=0.1,
    ),
    # the gap on unpublished controls above the published one (single-field novelty missed):
    # the case the bias's variance must carry the single-field controls twice for
    Scenario(
        "100, single-field novelty missed 0.2", topics=100, mode="differential", missed_single=0.2
    ),
    Scenario("363, single-field novelty missed 0.2", mode="differential", missed_single=0.2),
    Scenario(
        "363, base 0.5, +0.05 and novelty missed 0.2",
        base=0.5,
        mode="differential",
        differential=0.05,
        missed_single=0.2,
    ),
    # errors against the hypothesis: cross-field published items called novel less often by
    # both tiers (the adjudicated difference lowered without a lower true one): `refuted`
    # needs the difference corrected for the error below +SESOI too
    Scenario("363, differential against -0.05", mode="differential", differential=-0.05),
    Scenario(
        "363 all adj., 2 samples, against -0.10",
        share=1.0,
        samples=2,
        mode="differential",
        differential=-0.1,
    ),
    Scenario(
        "363 half adj., 2 samples, against -0.10",
        share=0.5,
        samples=2,
        mode="differential",
        differential=-0.1,
    ),
    Scenario("100, differential against -0.10", topics=100, mode="differential", differential=-0.1),
    Scenario("363 topics, base 0.30, 2000 controls", controls=2000),
    Scenario("363, adjudicators judge by topic", mode="by_topic"),
    Scenario("363, adjudicators find one topic", mode="one_topic"),
    Scenario("363, adjudicators' own rule, 1% novel", mode="own_rule", own_rate=0.01),
    Scenario("363, adjudicators' own rule, 5% novel", mode="own_rule", own_rate=0.05),
    Scenario("100, adjudicators' own rule, 1% novel", topics=100, mode="own_rule"),
    Scenario("80 topics, 20 adjudicated, base 0.02", topics=80, share=0.25, base=0.02),
    Scenario("48 topics, 12 adjudicated, base 0.02", topics=48, share=0.25, base=0.02),
    # controls easier than real items (0.9 on controls, 0.8 on real items)
    Scenario("363 all adj., adjudicators 0.8 on real items", share=1.0, harder=0.1),
    Scenario(
        "363 all adj., both tiers 0.1 worse on real", share=1.0, harder=0.1, harder_primary=0.1
    ),
    Scenario("100, both tiers 0.1 worse on real items", topics=100, harder=0.1, harder_primary=0.1),
]
# the planner's pick at primaries 0.8, adjudicators 0.9 with the plan's 3 primary reviewers
# per item (`harness power --adjudicated`, `differential_error: auto`, controls alike): three
# quarters adjudicated by an escalated majority of three, one output per prompt, 218 controls
# each (each judged by the first round's two): 2,433 careful judgments, against 6,098 for
# every topic adjudicated by two with 2 outputs per prompt
PICK = Scenario(
    "DECISIVE bank, 75%, 1 sample, escalated majority, 218 ctl",
    share=0.75,
    samples=1,
    primary=3,
    adjudicators=3,
    combine="majority",
    controls=218,
    per_control=2,
)
# The designs with power goals (primaries 0.8, adjudicators 0.9, planned controls)
DECISIVE = [
    Scenario("DECISIVE bank, all adjudicated, 2 samples", share=1.0, samples=2),
    Scenario("DECISIVE bank, all adj., 2 samples, 2000 ctl", share=1.0, samples=2, controls=2000),
    Scenario("DECISIVE bank, half adjudicated, 2 samples", share=0.5, samples=2),
    PICK,
    # controls (and real items) that differ in difficulty, two calls on one correlated 0.4
    # (`planning.control_correlation`): the planner's pick then, the pick for controls alike,
    # and the 50-topic design
    Scenario(
        "DECISIVE bank, half adj., 2 samples, 2x ctl, ctl rho 0.4",
        share=0.5,
        samples=2,
        primary=3,
        controls=874,
        control_correlation=0.4,
    ),
    replace(
        PICK,
        name="DECISIVE bank, 75%, esc. majority, 218 ctl, ctl rho 0.4",
        control_correlation=0.4,
    ),
    Scenario("DECISIVE bank, 40% adjudicated, 2 samples", share=0.4, samples=2),
    Scenario("DECISIVE 50, all adjudicated, 2 samples", topics=50, share=1.0, samples=2),
    Scenario("DECISIVE 50, all adj., 2 samples, 60 controls", 50, 1.0, samples=2, controls=60),
    Scenario("DECISIVE 50, all adjudicated, 2 samples, base 0.1", 50, 1.0, 0.1, samples=2),
    Scenario(
        "DECISIVE 50, all adj., 2 samples, ctl rho 0.4", 50, 1.0, samples=2, control_correlation=0.4
    ),  # fmt: skip
]


class Rates:
    def __init__(self) -> None:
        self.size = self.refuted_sesoi = self.power = self.power_sesoi = math.nan
        self.refuted_null = self.other_null = self.other_sesoi = self.other_refuted = math.nan
        self.coverage = self.coverage_corrected = 1.0
        self.withheld = 0.0

    def add(self, effect: float, d: Decisions) -> None:
        # the verdict's interval: corrected for differential error where the plan requires
        # robustness (`refuted` reads it), theta / J beside it (errors taken alike by condition)
        robust = d.covered_corrected if REQUIRE else None
        self.coverage = min(self.coverage, d.coverage(robust))
        if robust is not None:
            self.coverage_corrected = min(self.coverage_corrected, d.coverage())
        if d.withheld is not None:
            self.withheld = max(self.withheld, float(d.withheld.mean()))
        # the plan's `supported` (robust to differential error under `require`) and the other
        # mode's, to show what the guard costs and what it keeps out
        robust = d.robust if d.robust is not None else d.supported
        plan, other = (robust, d.supported) if REQUIRE else (d.supported, robust)
        guarded = d.refuted_robust if d.refuted_robust is not None else d.refuted
        refuted, other_refuted = (guarded, d.refuted) if REQUIRE else (d.refuted, guarded)
        if effect == 0.0:
            self.size, self.refuted_null = float(plan.mean()), float(refuted.mean())
            self.other_null = float(other.mean())
            self.other_refuted = float(other_refuted.mean())
        elif effect == SESOI:
            self.refuted_sesoi = float(refuted.mean())
            self.power_sesoi, self.other_sesoi = float(plan.mean()), float(other.mean())
        else:
            self.power = float(plan.mean())

    def text(self, coverage: bool = True) -> str:
        values = (self.size, self.refuted_sesoi)
        tail = (self.power_sesoi, self.power, self.refuted_null)
        cover = f"{self.coverage:>6.1%}" if coverage else f"{'':>6}"
        held = f"{self.withheld:>6.1%}" if coverage else f"{'':>6}"
        robust = " ".join(
            f"{v:>6.1%}"
            for v in (
                self.other_null,
                self.other_sesoi,
                self.other_refuted,
                self.coverage_corrected,
            )
        )
        return (
            " ".join(f"{v:>6.1%}" for v in values)
            + f" {cover} "
            + " ".join(f"{v:>6.1%}" for v in tail)
            + f" {held}"
            + (f" {robust}" if coverage else "")
        )

    def meets(self, studies: int) -> bool:
        """Goals, each judged within two Monte Carlo standard errors."""
        se = 2 * math.sqrt(0.05 * 0.95 / studies)
        return (
            self.size <= 0.065 + se
            and self.refuted_sesoi <= 0.05 + se
            and self.coverage >= 0.93 - se
        )


def share(rule: float, reference: float) -> str:
    return f"{rule / reference:>5.0%}" if reference > 0.005 else "  n/a"


def run_cell(cell: Scenario, studies: int, rng: np.random.Generator) -> tuple[Rates, Rates]:
    rule, reference = Rates(), Rates()
    for effect in EFFECTS:
        batch = simulate(cell, effect, studies, rng)
        rule.add(effect, auto_rule(batch, ALPHA, SESOI, MIN_J, FINITE))
        if math.isfinite(batch.youden):
            reference.add(effect, reference_rule(batch, ALPHA, SESOI))
    return rule, reference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="300 studies per cell")
    parser.add_argument("--only", nargs="*", default=None, help="cells whose name contains these")
    parser.add_argument("--seed", type=int, default=20261207)
    args = parser.parse_args()
    studies = 300 if args.quick else args.studies
    rng = np.random.default_rng(args.seed)
    cells = [c for c in CELLS + DECISIVE if not args.only or any(o in c.name for o in args.only)]
    # the planned controls per adjudicator: the plan's share of their real items; the designs
    # with power goals at the planning defaults' spread of topics (planning.rho), as planned
    cells = [replace(c, control_share=PLAN.controls.adjudicators) for c in cells]
    cells = [replace(c, sd_topic=SD_PLANNED) if c.name.startswith("DECISIVE") else c for c in cells]
    print(
        f"{studies} studies per cell and true difference; alpha {ALPHA}, SESOI {SESOI}, "
        f"min J {MIN_J}; betting below {FINITE} adjudicated topics"
    )
    print("columns: supported at 0 | refuted at +SESOI | min coverage | supported at +0.1 |")
    print("         supported at +0.2 | refuted at 0; goals: <= 6.5% | <= 5% | >= 93%;")
    print("         share: the rule's power as a share of the reference's (sup +0.1 / ref 0);")
    print("         held: the largest share of studies whose interval the report withholds (the")
    print("         tiers disagree); coverage is of the printed intervals; sup columns are the")
    print(
        f"         plan's `supported` (differential_error: {PLAN.adjudication.differential_error});"
    )
    print("         oth0 / oth.1 / othR0: `supported` at 0 and +0.1, `refuted` at 0 under the")
    print("         other mode (report or require): what the guards against differential")
    print("         error keep out and cost (`refuted` there: the corrected difference below")
    print("         +SESOI too);")
    print("         covJ: lowest coverage of theta / J's Fieller interval, which assumes errors")
    print("         that do not depend on the condition (reported beside the verdict's)")
    print(
        f"{'cell':<46} {'rule':<9} {'sup0':>6} {'refS':>6} {'cover':>6} {'sup.1':>6} "
        f"{'sup.2':>6} {'ref0':>6} {'held':>6} {'oth0':>6} {'oth.1':>6} {'othR0':>6} {'covJ':>6}"
    )
    failed = []
    for cell in cells:
        start = time.perf_counter()
        rule, reference = run_cell(cell, studies, rng)
        ok = rule.meets(studies)
        failed += [] if ok else [cell.name]
        seconds = time.perf_counter() - start
        method = "betting" if round(cell.share * cell.topics) < FINITE else "joint"
        print(
            f"{cell.name:<46} {method:<9} {rule.text()}  {'ok' if ok else 'MISSED'} ({seconds:.0f} s)"
        )
        if math.isfinite(reference.size):
            shares = (
                f"share {share(rule.power_sesoi, reference.power_sesoi)} /"
                f" {share(rule.refuted_null, reference.refuted_null)}"
            )
            print(f"{'':<46} {'reference':<9} {reference.text(coverage=False)}  {shares}")
    print("\ncells that missed a goal:", ", ".join(failed) if failed else "none")


if __name__ == "__main__":
    main()
