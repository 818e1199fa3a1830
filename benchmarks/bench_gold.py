"""Simulation benchmark of the verdict on the adjudicated scale (PPI++ with a gold subsample)
beside the current control-corrected verdict, and what the gold subsample costs.

Whole studies (`harness.analysis.simulation.gold`): N topics (100, and the bank's 363), three
conditions, one output per prompt; true novelty from the plan's latent design (topic and
topic-by-condition effects: topics differ), p_single 0.3; 2 primary reviewers per item with the
cell's accuracy on real items, and the cell's *control* accuracy on 45 published + 45
unpublished control judgments; 2 adjudicators per item (accuracy 0.95, combined by their mean)
on n topics. True differences 0, 0.111 and 0.20. The new rule's estimand is the adjudicated-scale
difference, 0.9 x the true one: 0.111 true is +SESOI (0.10) there, and 0.20 true is 0.18. The
current rule's interval is of the corrected (true-scale) difference, and its coverage is judged
against the true difference; its `refuted` rate at 0.111 true is above its own margin too.

1. Per cell, side by side: size of `supported` at no effect, `refuted` at +SESOI (adjudicated),
   the worst coverage of the 95% interval over the three differences, power of `supported` at
   0.20 true and of `refuted` at 0 (for the new rule with the normal approximation of
   `harness.analysis.planning.gold_power` beside it). Goals for the new rule in every cell: size
   5% +/- 1.5; refuted at +SESOI at most 5% (judged within 2 Monte Carlo SE); coverage >= 93%.
2. Value for money on the bank (363 topics, no true difference): for primary accuracy 0.7 /
   0.85 / 0.95 the careful-reviewer judgments for 80% power to refute with PPI++ (searched over
   n) against careful reviewers judging every item of fewer topics (the classical paired test;
   searched over topics), simulated, beside the normal approximation.

    python benchmarks/bench_gold.py [--studies 2000] [--quick] [--only table value]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from harness.analysis.plan.plan_file import load_plan
from harness.analysis.planning.gold_power import (
    Accuracy,
    GoldPlanner,
    GoldPowerSettings,
    ppi_variance,
    refuted_power,
    supported_power,
    topic_moments,
)
from harness.analysis.simulation.gold import (
    Cell,
    GoldBatch,
    GoldStudy,
    Outcome,
    all_careful_rule,
    current_rule,
    latent_correlations,
    new_rule,
    ppi_many,
    simulate_gold,
    topic_correlation,
)
from harness.analysis.simulation.known_accuracy import Reviewers

PLAN = load_plan().plan
DESIGN = PLAN.planning.design
ALPHA, SESOI = PLAN.primary.alpha, PLAN.equivalence.sesoi
P_SINGLE = 0.3
BANK = 363
SAMPLES = {100: [25], BANK: [91, 50]}  # adjudicated topics: 25% of topics, and 50
CELLS = [
    Cell("chance 0.5", Reviewers(0.5, 0.5), Reviewers(0.5, 0.5)),
    Cell("ctrl 0.9, real 0.5", Reviewers(0.5, 0.5), Reviewers(0.9, 0.9)),
    Cell("ctrl 0.9, real 0.6", Reviewers(0.6, 0.6), Reviewers(0.9, 0.9)),
    Cell("ctrl 0.9, real 0.7", Reviewers(0.7, 0.7), Reviewers(0.9, 0.9)),
    Cell("sens 0.8 x / 0.95 s", Reviewers(0.95, 0.9, 0.8), Reviewers(0.95, 0.9, 0.8)),
    Cell("good 0.85 / 0.9", Reviewers(0.85, 0.9), Reviewers(0.85, 0.9)),
]


def _mc(rate: float, n: int) -> float:
    return math.sqrt(max(rate * (1 - rate), 1e-12) / n)


@dataclass
class Rates:
    size: float = math.nan
    refuted_sesoi: float = math.nan
    coverage: float = 1.0
    power: float = math.nan
    refuted_null: float = math.nan

    def add(self, outcome: Outcome, kind: str, truth: float) -> None:
        self.coverage = min(self.coverage, float(outcome.covers(truth).mean()))
        if kind == "null":
            self.size = float(outcome.supported.mean())
            self.refuted_null = float(outcome.refuted.mean())
        elif kind == "sesoi":
            self.refuted_sesoi = float(outcome.refuted.mean())
        else:
            self.power = float(outcome.supported.mean())

    def cells(self) -> str:
        return (
            f"{self.size:>6.1%} {self.refuted_sesoi:>6.1%} {self.coverage:>6.1%} "
            f"{self.power:>6.1%} {self.refuted_null:>6.1%}"
        )


def _approx(cell: Cell, topics: int, n: int) -> tuple[float, float]:
    """Normal approximation of (supported at 0.20 true, refuted at 0) for the new rule."""
    r = cell.items
    primary = Accuracy(r.sensitivity, r.specificity, r.sensitivity_cross, r.specificity_cross)
    out = []
    for effect in (0.2, 0.0):
        rho_c, rho_s = latent_correlations(DESIGN, P_SINGLE, effect)
        m = topic_moments(
            p_single=P_SINGLE,
            effect=effect,
            rho=rho_c,
            rho_singles=rho_s,
            primary=primary,
            reviewers=2,
        )
        se = math.sqrt(ppi_variance(m, topics, n))
        out.append(
            supported_power(se, m.difference, ALPHA, n)
            if effect
            else refuted_power(se, 0.0, ALPHA, SESOI, n)
        )
    return out[0], out[1]


def table(studies: int, rng: np.random.Generator) -> None:
    study_scale = GoldStudy(BANK).scale
    effects = {"null": 0.0, "sesoi": SESOI / study_scale, "power": 0.2}
    print(
        f"\n1. Verdicts by rule ({studies} studies per cell; p_single {P_SINGLE}; 2 primary "
        f"reviewers and 2 adjudicators at 0.95 per item; 45 + 45 control judgments). Columns: "
        f"size = supported at 0; ref+S = refuted at +{SESOI:g} adjudicated ({effects['sesoi']:.3f}"
        " true); cover = worst 95% coverage over the three differences; pow.2 = supported at "
        "0.20 true (0.18 adjudicated); ref0 = refuted at 0; approx = the planning formula's "
        "pow.2 / ref0"
    )
    print(
        f"{'N':>4} {'n':>3} {'primary reviewers':<20}| {'NEW: size':>9} {'ref+S':>6} "
        f"{'cover':>6} {'pow.2':>6} {'ref0':>6} {'approx':>11} | {'CURRENT: size':>13} "
        f"{'ref+S':>6} {'cover':>6} {'pow.2':>6} {'ref0':>6} | goals"
    )
    failures = []
    for topics, samples in SAMPLES.items():
        for cell in CELLS:
            start = time.perf_counter()
            new = {n: Rates() for n in samples}
            current = Rates()
            for kind, effect in effects.items():
                batch = simulate_gold(
                    GoldStudy(topics),
                    cell,
                    DESIGN,
                    studies=studies,
                    p_single=P_SINGLE,
                    effect=effect,
                    rng=rng,
                )
                for n in samples:
                    new[n].add(new_rule(batch, n, PLAN), kind, batch.adjudicated_difference)
                current.add(current_rule(batch, PLAN, rng), kind, batch.true_difference)
            for n in samples:
                r = new[n]
                ok_size = abs(r.size - ALPHA) <= 0.015
                ok_ref = r.refuted_sesoi <= ALPHA + 2 * _mc(ALPHA, studies)
                ok_cover = r.coverage >= 0.93
                flags = "".join("." if ok else "X" for ok in (ok_size, ok_ref, ok_cover))
                if flags != "...":
                    failures.append(f"N {topics} n {n} {cell.name}: {flags}")
                a = _approx(cell, topics, n)
                print(
                    f"{topics:>4} {n:>3} {cell.name:<20}| {r.cells():>36} "
                    f"{a[0]:>5.1%}/{a[1]:<5.1%} | {current.cells():>41} | {flags}"
                )
            print(f"{'':>9}({time.perf_counter() - start:.0f} s)")
    se = _mc(ALPHA, studies)
    print(
        f"   goals (new rule): size within 5% +/- 1.5 (MC SE {se:.1%}), refuted at +SESOI "
        f"<= 5% + 2 MC SE, coverage >= 93%; flags size/refuted/coverage ('.' met, 'X' not): "
        + ("all met" if not failures else "; ".join(failures))
    )


def _smallest(power: Callable[[int], float], low: int, high: int, target: float) -> int | None:
    """Smallest n in [low, high] with power(n) >= target (power nearly monotone: the studies
    are the same for every n)."""
    if power(high) < target:
        return None
    while low < high:
        mid = (low + high) // 2
        if power(mid) >= target:
            high = mid
        else:
            low = mid + 1
    return low


def value(studies: int, rng: np.random.Generator) -> None:
    target, per_topic = 0.8, 3 * 2
    print(
        f"\n2. Value for money on the bank ({BANK} topics, no true difference, {studies} studies "
        f"per design; 2 primary reviewers, 2 adjudicators at 0.95 per item, {per_topic} careful "
        f"judgments per topic): careful judgments for {target:.0%} power to refute, PPI++ "
        "(n searched) against careful reviewers on every item of fewer topics (classical paired "
        "test; topics searched). 'rule' refutes as the verdict does (equivalence or "
        "significantly below zero); 'TOST' counts equivalence alone"
    )
    print(
        f"{'items':<12} {'acc':>5} {'rho':>5} {'rho^2':>6} {'test':>5} {'n PPI':>6} {'n all':>6} "
        f"{'careful PPI/all':>16} {'ratio':>6} {'approx':>7} {'formula':>8}"
    )
    designs = {
        "independent": DESIGN.model_copy(
            update={"sd_topic": 0.0, "sd_topic_condition": 0.0, "sd_sample": 0.0}
        ),
        "topics vary": DESIGN,
    }
    for label, design in designs.items():
        rho_c, rho_s = latent_correlations(design, P_SINGLE, 0.0)
        for accuracy in (0.7, 0.85, 0.95):
            cell = Cell(f"{accuracy}", Reviewers(accuracy, accuracy), Reviewers(0.9, 0.9))
            batch = simulate_gold(
                GoldStudy(BANK),
                cell,
                design,
                studies=studies,
                p_single=P_SINGLE,
                effect=0.0,
                rng=rng,
            )
            rho = topic_correlation(batch)
            m = topic_moments(
                p_single=P_SINGLE,
                effect=0.0,
                rho=rho_c,
                rho_singles=rho_s,
                primary=Accuracy(accuracy, accuracy),
                reviewers=2,
            )
            planner = GoldPlanner(
                GoldPowerSettings(
                    topics=BANK,
                    p_single=P_SINGLE,
                    rho=rho_c,
                    sesoi=SESOI,
                    alpha=ALPHA,
                    target=target,
                    reviewers=2,
                )
            )
            approx = planner.needed(Accuracy(accuracy, accuracy))[1].ratio
            for test in ("rule", "TOST"):
                n_ppi = _smallest(partial(_ppi_refutes, batch, test=test), 2, BANK, target)
                n_all = _smallest(partial(_careful_refutes, batch, test=test), 2, BANK, target)
                ratio = None if n_ppi is None or n_all is None else n_ppi / n_all
                # the variance ratio at equal power: (1 - rho^2) / (1 - rho^2 n_all / N)
                formula = None if n_all is None else (1 - m.rho**2) / (1 - m.rho**2 * n_all / BANK)
                print(
                    f"{label:<12} {accuracy:>5.2f} {rho:>5.2f} {rho**2:>6.3f} {test:>5} "
                    f"{_n(n_ppi):>6} {_n(n_all):>6} "
                    f"{_judgments(n_ppi, n_all, per_topic):>16} {_r(ratio):>6} "
                    f"{_r(approx) if test == 'rule' else '':>7} {_r(formula):>8}"
                )
    print(
        "   issue's estimate (independent items, normal approximation): about 0.92 / 0.75 / "
        "0.5. 'formula' is that estimate's variance ratio (1 - rho^2) / (1 - rho^2 n_all / N), "
        "rho the model's topic-level correlation of d_t and f_t, at the simulated n_all; "
        "'approx' is harness power's normal approximation (refuted as the rule refutes)"
    )


def _ppi_refutes(batch: GoldBatch, n: int, *, test: str) -> float:
    o = new_rule(batch, n, PLAN)
    if test == "rule":
        return float(o.refuted.mean())
    r = ppi_many(batch.d[:, :n], batch.f[:, :n], batch.f[:, n:])
    return float(np.mean(~o.supported & (r.p_tost(SESOI) < ALPHA)))


def _careful_refutes(batch: GoldBatch, n: int, *, test: str) -> float:
    o = all_careful_rule(batch, n, PLAN)
    if test == "rule":
        return float(o.refuted.mean())
    d = batch.d[:, :n]
    r = ppi_many(d, d, d[:, :0])
    return float(np.mean(~o.supported & (r.p_tost(SESOI) < ALPHA)))


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)


def _r(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _judgments(n_ppi: int | None, n_all: int | None, per_topic: int) -> str:
    if n_ppi is None or n_all is None:
        return "-"
    return f"{n_ppi * per_topic}/{n_all * per_topic}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="200 studies per cell")
    parser.add_argument("--only", nargs="*", help="run only these parts (table, value)")
    args = parser.parse_args()
    studies = 200 if args.quick else args.studies
    rng = np.random.default_rng(20261202)
    for part in (table, value):
        if args.only and part.__name__ not in args.only:
            continue
        start = time.perf_counter()
        part(studies, rng)
        print(f"   ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
