"""`harness power`: analytic power and sample size, and optionally a full-design simulation.

Defaults come from the plan's `planning` section, so `harness power` with no options answers
"what does the preregistered design give us?".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

from harness.analysis.plan.plan_file import Design, Plan, load_plan
from harness.analysis.planning.bank_power import (
    BANK_REPS,
    BANK_SEED,
    BankPower,
    PowerInputs,
    bank_lines,
    bank_power,
)
from harness.analysis.planning.decisive_design import (
    Decisive,
    decisive_lines,
    search_design,
)
from harness.analysis.planning.gold_power import (
    AGREEMENTS,
    GoldPower,
    GoldPowerSettings,
    adjudicated_lines,
    adjudicated_power,
    parse_share_or_count,
    sample_size,
)
from harness.analysis.planning.models_power import ModelsPowerFigures, models_lines, models_power
from harness.analysis.planning.study_design import study_design
from harness.analysis.simulation.design_search import SearchResult
from harness.analysis.simulation.simulated_power import SimulationResult, simulate_design
from harness.analysis.statistics.decisive import (
    controls_needed,
    corrected_tost_power,
    corrected_tost_topics,
    gate_power,
    youden_bound,
)
from harness.analysis.statistics.sample_size import (
    CurveRow,
    discordant,
    mcnemar_power,
    mcnemar_sample_size,
    minimal_detectable_effect,
    paired_power,
    paired_sample_size,
    power_curve,
    sd_binary_difference,
    tost_power,
    tost_sample_size,
)
from harness.errors import HarnessError
from harness.materials.bank import load_topic_bank
from harness.progress import status

if TYPE_CHECKING:
    import pandas as pd


class AnalyticPower(TypedDict):
    """Power and topics needed by the normal approximations (McNemar: Connor 1987)."""

    p10: float  # discordant pairs: cross novel, single not
    p01: float
    sd: float  # SD of the paired difference at the effect
    sd_equivalence: float  # ... at the difference the equivalence figures assume
    mcnemar_power: float
    mcnemar_needed: int | None  # None: not reachable
    paired_power: float
    paired_needed: int | None
    mde_mcnemar: float | None  # minimal detectable effect (None: not reachable)
    mde_paired: float | None
    tost_power: float
    tost_needed: int | None


class AccuracyPower(TypedDict):
    """Both verdicts' power when reviewers misclassify as the plan's planning section says."""

    sensitivity: float
    specificity: float
    youden: float
    observed_effect: float  # the difference shrunk by J
    sd_observed: float
    controls: int
    min_youden: float
    supported_power: float
    supported_needed: int | None
    youden_bound: float
    controls_needed: int | None
    gate_power: float
    margin_bound: float
    refute_power: float | None
    refute_needed: int | None


class SearchFigures(TypedDict):
    """`design_search.SearchResult` as a dict."""

    value: float | None
    power: float | None
    power_se: float | None
    below: float | None
    power_below: float | None
    start: float
    simulations: int
    reps: int
    seed: int
    value_se: float | None


class SimulationPower(TypedDict):
    """The full design simulated through the primary analysis."""

    reps: int
    seed: int
    design: str
    power: float
    power_se: float
    type_i: float
    type_i_se: float
    pooled_type_i: float
    pooled_type_i_se: float
    sd_d: float | None
    sd_d_null: float | None
    topics_needed: int | None
    power_at_needed: float | None
    topics_search: SearchFigures | None
    effect_search: SearchFigures | None
    mde: float | None
    tost_power: float | None
    tost_needed: int | None


@dataclass
class PowerResult:
    inputs: PowerInputs
    analytic: AnalyticPower
    curve_rows: list[CurveRow]
    simulation: SimulationPower | None = None
    notes: list[str] = field(default_factory=list)
    accuracy: AccuracyPower | None = None
    bank: BankPower | None = None
    models: ModelsPowerFigures | None = None  # several models
    adjudicated: GoldPower | None = None  # the gold subsample (gold_power)
    decisive: Decisive | None = None  # the cheapest design that decides (decisive_design)

    @property
    def curve(self) -> pd.DataFrame:
        """Power by number of topics (columns topics, mcnemar, paired, equivalence); made on
        reading, so that `harness power`, which prints no curve, does not load pandas."""
        import pandas as pd

        return pd.DataFrame(self.curve_rows)

    def summary(self) -> str:
        i, a = self.inputs, self.analytic
        lines = [
            f"Power for {i['topics']} topics: p_single {i['p_single']:g}, effect "
            f"{i['effect']:+g}, rho {i['rho']:g}, one-sided alpha {i['alpha']:g}, "
            f"target {i['target']:.0%}, SESOI {i['sesoi']:g}",
            f"  McNemar (Connor 1987), p10 {a['p10']:.4f} p01 {a['p01']:.4f}: power "
            f"{a['mcnemar_power']:.3f}; topics needed {a['mcnemar_needed']}",
            f"  Paired difference (normal, SD {a['sd']:.3f}): power {a['paired_power']:.3f}; "
            f"topics needed {a['paired_needed']}",
            f"  Minimal detectable effect with {i['topics']} topics at {i['target']:.0%} power: "
            f"McNemar {_effect(a['mde_mcnemar'])}, paired {_effect(a['mde_paired'])}",
            f"  Equivalence at +/-{i['sesoi']:g}, assuming a true difference of "
            f"{i['equivalence_difference']:g} (both arms at p_single, SD "
            f"{a['sd_equivalence']:.3f}): power {a['tost_power']:.3f}; topics needed "
            f"{a['tost_needed']}",
        ]
        if self.models:
            lines += models_lines(self.models, i["topics"], i["effect"])
        if self.accuracy:
            lines += accuracy_lines(self.accuracy, i)
        if self.bank:
            lines += bank_lines(self.bank, i)
        if self.adjudicated:
            lines += adjudicated_lines(self.adjudicated)
        if self.decisive:
            lines += decisive_lines(self.decisive, i["sesoi"])
        if self.simulation:
            lines += _simulation_lines(self.simulation, i)
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def accuracy_lines(a: AccuracyPower, i: PowerInputs) -> list[str]:
    gate = "reaches" if a["youden_bound"] >= a["min_youden"] else "does NOT reach"
    return [
        f"  Reviewer accuracy: sensitivity {a['sensitivity']:g}, specificity "
        f"{a['specificity']:g}, J {a['youden']:.2f}: the observed difference shrinks to "
        f"J x {i['effect']:+g} = {a['observed_effect']:+.3f} (SD {a['sd_observed']:.3f})",
        f"    supported (one-sided, observed scale): power {a['supported_power']:.3f}; topics "
        f"needed {a['supported_needed']}",
        f"    with {a['controls']} control judgments the expected exact lower bound of J is "
        f"{a['youden_bound']:.3f}, which {gate} the plan's minimum {a['min_youden']:g}; "
        f"the gate passes with probability {a['gate_power']:.3f}; control judgments needed "
        f"for {i['target']:.0%}: {a['controls_needed']} (equal shares of the real judgments and "
        "equal controls per reviewer: design effect 1; uneven shares need deff times as many)",
        f"    refuted (equivalence on the corrected scale, margin SESOI x J's one-sided lower "
        f"bound {a['margin_bound']:.3f}, alpha/2): power {_num(a['refute_power'])}; topics "
        f"needed {a['refute_needed']} (normal approximation of the paired TOST; the default "
        f"betting test needs more)",
    ]


def _effect(value: float | None) -> str:
    return "not reachable" if value is None else f"{value:+.3f}"


def _simulation_lines(s: SimulationPower, i: PowerInputs) -> list[str]:
    lines = [
        f"Simulation of the full design through the primary analysis ({s['reps']} "
        f"studies each, seed {s['seed']}; {s['design']}):",
        f"  power {s['power']:.3f} +/- {s['power_se']:.3f} (Monte Carlo SE)",
        f"  type I error {s['type_i']:.3f} +/- {s['type_i_se']:.3f}; pooled z-test "
        f"(literal rule) {s['pooled_type_i']:.3f} +/- {s['pooled_type_i_se']:.3f}",
        f"  SD of d_t {_num(s['sd_d'])} at the effect, {_num(s['sd_d_null'])} at no difference",
    ]
    t = s["topics_search"]
    if t is not None and t["value"] is None:
        why = (
            "not searched, above the simulation limit"
            if t["simulations"] == 0
            else "not reached by simulation"
        )
        lines.append(
            f"  topics needed for {i['target']:.0%} at {i['effect']:+g}: {why} "
            f"(normal approximation with the simulated SD: {t['start']:g})"
        )
    elif t is not None:
        below = "" if t["below"] is None else f"; {t['below']:g} topics: {t['power_below']:.3f}"
        lines.append(
            f"  topics needed for {i['target']:.0%} at {i['effect']:+g}: {t['value']:g}, "
            f"simulated power there {t['power']:.3f} +/- {t['power_se']:.3f}{below} (searched "
            f"from the normal approximation {t['start']:g}, {t['simulations']} simulations)"
        )
    m = s["effect_search"]
    if m is not None and m["value"] is not None:
        below = "" if m["below"] is None else f"; {m['below']:+.3f}: {m['power_below']:.3f}"
        se = "" if m["value_se"] is None else f" +/- {m['value_se']:.3f} (Monte Carlo SE)"
        lines.append(
            f"  minimal detectable effect with {i['topics']} topics at {i['target']:.0%}: "
            f"{m['value']:+.3f}{se}, simulated power there {m['power']:.3f} +/- "
            f"{m['power_se']:.3f}{below} ({m['simulations']} simulations)"
        )
    elif m is not None:
        lines.append("  minimal detectable effect: target power not reached by any difference")
    if s["tost_power"] is not None:
        lines.append(
            f"  equivalence at +/-{i['sesoi']:g}, assuming a true difference of 0 (normal "
            f"approximation, simulated SD {s['sd_d_null']:.3f}): power {s['tost_power']:.3f}; "
            f"topics needed {s['tost_needed']}"
        )
    return lines


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def power(
    *,
    topics: int | None = None,
    p_single: float | None = None,
    effect: float | None = None,
    sesoi: float | None = None,
    rho: float | None = None,
    alpha: float | None = None,
    target: float | None = None,
    simulate: bool = False,
    reps: int | None = None,
    samples: int | None = None,
    reviewers: int | None = None,
    seed: int | None = None,
    plan: str | Path | Plan | None = None,
    sensitivity: float | None = None,
    specificity: float | None = None,
    bank: str | Path | bool | None = None,
    bank_reps: int | None = None,
    models: int | None = None,
    model_correlation: float | None = None,
    study_file: str | Path | None = None,
    adjudicated: float | int | str | None = None,
    agreement: float | None = None,
    control_correlation: float | None = None,
) -> PowerResult:
    """Analytic power (Connor 1987; normal approximations) and, with `simulate`, the full
    design run through the exact primary analysis. `bank` (True: the bundled bank, or a bank
    file or folder) adds what a study on all of that bank's topics can decide (`bank_reps`
    simulated studies per equivalence figure, default `bank_power.BANK_REPS`). `models` (default
    the plan's planning.models) above 1 adds the pooled and per-model designs' power with
    `model_correlation` between models (harness.analysis.planning.models_power). `study_file`
    (a study.yaml) gives the topics, models, outputs per prompt, plan and bank of the study it
    describes wherever the arguments leave them unset. `adjudicated` (a share of the topics, a
    count, or its text; default the plan's adjudication.topics, 0 for none) adds the adjudicated
    design's power by sample size at primary accuracy `agreement` (default 0.7, 0.85 and 0.95;
    harness.analysis.planning.gold_power); `control_correlation` (default the plan's
    planning.control_correlation) the correlation of two adjudicators' calls on one control
    that the design search assumes."""
    import numpy as np

    from_file = None
    if study_file is not None:
        from_file = study_design(study_file)
        topics = topics or from_file.topics
        models = from_file.models if models is None else models
        samples = samples or from_file.samples
        plan = from_file.plan if plan is None else plan
        bank = (from_file.bank or True) if bank is True else bank
    base = plan if isinstance(plan, Plan) else load_plan(plan).plan
    base = _with_accuracy(base, sensitivity, specificity)
    if control_correlation is not None:
        if not 0.0 <= control_correlation < 1.0:
            raise HarnessError(
                "--control-correlation must lie in [0, 1)", column="control_correlation"
            )
        update = {"control_correlation": control_correlation}
        base = base.model_copy(update={"planning": base.planning.model_copy(update=update)})
    p = base.planning
    sized = (
        None if bank is None or bank is False else bank_size(None if bank is True else Path(bank))
    )
    inputs: PowerInputs = {
        # with a bank and no --topics, every figure is for the bank's size
        "topics": topics or (sized[0] if sized else p.topics),
        "p_single": p.p_single if p_single is None else p_single,
        "effect": p.effect if effect is None else effect,
        "rho": p.rho if rho is None else rho,
        "alpha": alpha or base.primary.alpha,
        "target": target or p.power,
        "sesoi": sesoi or base.equivalence.sesoi,
        # equivalence power is computed for arms that truly do not differ
        "equivalence_difference": 0.0,
        "models": p.models if models is None else models,
        "model_correlation": p.model_correlation
        if model_correlation is None
        else model_correlation,
    }
    if inputs["topics"] < 2:
        raise HarnessError("--topics must be at least 2", column="topics")
    if inputs["models"] < 1:
        raise HarnessError("--models must be at least 1", column="models")
    if not 0.0 <= inputs["model_correlation"] <= 1.0:
        raise HarnessError("--model-correlation must lie in [0, 1]", column="model_correlation")
    analytic = _analytic(inputs)
    grid = np.unique(np.geomspace(10, max(4 * inputs["topics"], 400), 40).astype(int))
    curve = power_curve(
        grid,
        p_single=inputs["p_single"],
        effect=inputs["effect"],
        sesoi=inputs["sesoi"],
        rho=inputs["rho"],
        alpha=inputs["alpha"],
        sd_equivalence=analytic["sd_equivalence"],
    )
    result = PowerResult(inputs, analytic, curve, accuracy=_accuracy(base, inputs))
    if from_file is not None:
        result.notes.append(from_file.line())
    if inputs["models"] > 1:
        result.models = models_power(
            topics=inputs["topics"],
            effect=inputs["effect"],
            sd=analytic["sd"],
            models=int(inputs["models"]),
            correlation=inputs["model_correlation"],
            alpha=inputs["alpha"],
            target=inputs["target"],
        ).as_dict()
    if sized is not None:
        count, label = sized
        n_reps = BANK_REPS if bank_reps is None else bank_reps
        with status(f"simulating the bank's equivalence test ({n_reps} studies per figure)"):
            result.bank = bank_power(
                base,
                inputs,
                count,
                label,
                sensitivity=p.sensitivity,
                specificity=p.specificity,
                reps=n_reps,
                seed=BANK_SEED if seed is None else seed,
            )
    result.adjudicated = _adjudicated(base, inputs, adjudicated, agreement, reviewers, samples)
    if result.adjudicated is not None and (adjudicated is not None or bank):
        # asked for the adjudicated design (or the bank's): the cheapest one that decides
        with status("searching the cheapest design whose verdict decides (simulated)"):
            result.decisive = search_design(result.adjudicated, base)
    if simulate:
        design = base.planning.design.model_copy(
            update={k: v for k, v in (("samples", samples), ("reviewers", reviewers)) if v}
        )
        sim_plan = base.model_copy(
            update={
                "primary": base.primary.model_copy(update={"alpha": inputs["alpha"]}),
                "planning": p.model_copy(update={"power": inputs["target"]}),
            }
        )
        with status("simulating the full design (power, topics needed, detectable effect)"):
            sim = simulate_design(
                sim_plan,
                design,
                topics=int(inputs["topics"]),
                p_single=inputs["p_single"],
                effect=inputs["effect"],
                reps=reps,
                seed=seed,
            )
        result.simulation = _simulation(sim, design, inputs)
    return result


def _adjudicated(
    plan: Plan,
    i: PowerInputs,
    sample: float | int | str | None,
    agreement: float | None,
    reviewers: int | None,
    samples: int | None,
) -> GoldPower | None:
    """The adjudicated design's figures, or None without a sample (plan or argument)."""
    if isinstance(sample, str):
        try:
            sample = parse_share_or_count(sample)
        except ValueError as error:
            raise HarnessError(f"--adjudicated: {error}", column="adjudicated") from None
    if sample is None:
        sample = plan.adjudication.topics or 0
    if not sample:
        return None
    if agreement is not None and not 0.5 <= agreement <= 1.0:
        raise HarnessError(
            f"--agreement must lie in [0.5, 1] (got {agreement:g})", column="agreement"
        )
    topics = int(i["topics"])
    design = plan.planning.design
    settings = GoldPowerSettings(
        topics=topics,
        p_single=i["p_single"],
        rho=i["rho"],
        sesoi=i["sesoi"],
        alpha=i["alpha"],
        target=i["target"],
        reviewers=reviewers or design.reviewers,
        adjudicators=plan.adjudication.per_item,
        # several models: every model's outputs of a sampled topic are adjudicated, and the
        # topic's difference pools them like more outputs per prompt
        samples=(samples or design.samples) * int(i["models"]),
        singles=2 if plan.single == "mean_of_singles" else 1,
    )
    with status("simulating the verdict's own rule at each adjudicated sample"):
        return adjudicated_power(
            settings,
            plan,
            adjudicated=sample_size(sample, topics),
            agreements=list(AGREEMENTS) if agreement is None else [agreement],
        )


def _with_accuracy(plan: Plan, sensitivity: float | None, specificity: float | None) -> Plan:
    update = {
        k: v
        for k, v in (("sensitivity", sensitivity), ("specificity", specificity))
        if v is not None
    }
    for name, value in update.items():
        if not 0.0 < value <= 1.0:
            raise HarnessError(f"--{name} must lie in (0, 1] (got {value:g})", column=name)
    if not update:
        return plan
    return plan.model_copy(update={"planning": plan.planning.model_copy(update=update)})


def bank_size(path: Path | None) -> tuple[int, str]:
    """Topics in a bank (None: the bundled one) and how to name it."""
    loaded = load_topic_bank(path)
    label = ", ".join(f.name for f in loaded.files) if path is not None else "bundled bank"
    return len(loaded.topics), label


def _analytic(i: PowerInputs) -> AnalyticPower:

    p_cross = i["p_single"] + i["effect"]
    p10, p01 = discordant(p_cross, i["p_single"], i["rho"])
    sd = sd_binary_difference(p_cross, i["p_single"], i["rho"])
    # TOST assumes the true difference `equivalence_difference`: its SD is the SD there
    diff = i["equivalence_difference"]
    sd_eq = sd_binary_difference(i["p_single"] + diff, i["p_single"], i["rho"])
    n, alpha, target = i["topics"], i["alpha"], i["target"]
    return {
        "p10": p10,
        "p01": p01,
        "sd": sd,
        "sd_equivalence": sd_eq,
        "mcnemar_power": mcnemar_power(n, p10, p01, alpha),
        "mcnemar_needed": _or_none(lambda: mcnemar_sample_size(p10, p01, alpha, target)),
        "paired_power": paired_power(n, i["effect"], sd, alpha),
        "paired_needed": _or_none(lambda: paired_sample_size(i["effect"], sd, alpha, target)),
        "mde_mcnemar": minimal_detectable_effect(
            n, i["p_single"], i["rho"], alpha, target, "mcnemar"
        ),
        "mde_paired": minimal_detectable_effect(n, i["p_single"], i["rho"], alpha, target),
        "tost_power": tost_power(n, sd_eq, i["sesoi"], diff, alpha),
        "tost_needed": _or_none(lambda: tost_sample_size(sd_eq, i["sesoi"], diff, alpha, target)),
    }


def _accuracy(plan: Plan, i: PowerInputs) -> AccuracyPower:
    """Power of both verdicts when reviewers misclassify as the plan's planning section says."""
    p, c = plan.planning, plan.controls
    sens, spec = p.sensitivity, p.specificity
    youden = sens + spec - 1.0

    def observed(pi: float) -> float:
        return min(max((1.0 - sens) + youden * pi, 1e-6), 1.0 - 1e-6)

    q_single, q_cross = observed(i["p_single"]), observed(i["p_single"] + i["effect"])
    sd = sd_binary_difference(q_cross, q_single, i["rho"])
    sd_null = sd_binary_difference(q_single, q_single, i["rho"])
    effect = q_cross - q_single
    bound = youden_bound(sens, spec, p.controls, 1.0 - i["alpha"]) if p.controls else -1.0
    n = i["topics"]
    return {
        "sensitivity": sens,
        "specificity": spec,
        "youden": youden,
        "observed_effect": effect,
        "sd_observed": sd,
        "controls": p.controls,
        "min_youden": c.min_youden,
        "supported_power": paired_power(n, effect, sd, i["alpha"]) if effect > 0 else 0.0,
        "supported_needed": _or_none(
            lambda: paired_sample_size(effect, sd, i["alpha"], i["target"])
        ),
        "youden_bound": youden_bound(sens, spec, p.controls, c.level) if p.controls else -1.0,
        "controls_needed": controls_needed(sens, spec, c.min_youden, c.level, i["target"]),
        "gate_power": (
            gate_power(sens, spec, p.controls, c.min_youden, c.level) if p.controls else 0.0
        ),
        "margin_bound": bound,
        "refute_power": corrected_tost_power(n, sd_null, i["sesoi"], bound, i["alpha"]),
        "refute_needed": corrected_tost_topics(sd_null, i["sesoi"], bound, i["alpha"], i["target"]),
    }


def _or_none(compute: Callable[[], int | None]) -> int | None:
    try:
        result: int | None = compute()
        return result
    except HarnessError:
        return None


def _simulation(sim: SimulationResult, design: Design, i: PowerInputs) -> SimulationPower:

    sd_null = sim.type_i.sd_d if math.isfinite(sim.type_i.sd_d) else None
    tost = (
        (None, None)
        if sd_null is None
        else (
            tost_power(i["topics"], sd_null, i["sesoi"], 0.0, i["alpha"]),
            _or_none(lambda: tost_sample_size(sd_null, i["sesoi"], 0.0, i["alpha"], i["target"])),
        )
    )
    return {
        "reps": sim.power.reps,
        "seed": sim.seed,
        "design": ", ".join(f"{k} {v:g}" for k, v in design.model_dump().items()),
        "power": sim.power.primary,
        "power_se": sim.power.primary_se,
        "type_i": sim.type_i.primary,
        "type_i_se": sim.type_i.primary_se,
        "pooled_type_i": sim.type_i.pooled,
        "pooled_type_i_se": sim.type_i.pooled_se,
        "sd_d": sim.power.sd_d if math.isfinite(sim.power.sd_d) else None,
        "sd_d_null": sd_null,
        "topics_needed": sim.topics_needed,
        "power_at_needed": sim.power_at_needed,
        "topics_search": _search(sim.topics_search),
        "effect_search": _search(sim.effect_search),
        "mde": None if sim.effect_search is None else sim.effect_search.value,
        "tost_power": tost[0],
        "tost_needed": tost[1],
    }


def _search(result: SearchResult | None) -> SearchFigures | None:
    return None if result is None else cast(SearchFigures, asdict(result))
