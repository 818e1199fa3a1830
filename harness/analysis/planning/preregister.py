"""`prereg.md`: what is fixed before unblinding, and its record in the manifest.

It states the hypothesis, the design as it stands in the store, the materials and their hashes,
the analysis plan with its SHA-256, the blinding commitment when packets exist, and a power
analysis for the planned number of topics. The manifest section `prereg` keeps the plan's hash,
which `analyze` checks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from harness.analysis.plan.plan_file import LoadedPlan, Plan, load_plan
from harness.analysis.planning.decisive_design import study_power, study_power_lines
from harness.analysis.statistics.decisive import controls_needed
from harness.analysis.statistics.sample_size import (
    discordant,
    mcnemar_power,
    mcnemar_sample_size,
    paired_power,
    paired_sample_size,
    sd_binary_difference,
    tost_power,
    tost_sample_size,
)
from harness.errors import HarnessError
from harness.progress import status
from harness.study.clock import utc_now
from harness.study.lock import writes_study
from harness.study.manifest import read_manifest, record_command, record_materials, record_section
from harness.study.manifest_sections import Blinding, MaterialFile, Prereg
from harness.study.store import Study
from harness.study.tables.outputs import most_samples, output_models
from harness.study.tables.views import reviewer_kinds, store_counts

PREREG_NAME = "prereg.md"


@dataclass(frozen=True)
class PreregResult:
    path: Path
    plan_path: str
    plan_sha256: str
    at: str
    reviews_in_store: int
    text: str

    def summary(self) -> str:
        warning = (
            f"\nWARNING: {self.reviews_in_store} reviews were already in the store."
            if self.reviews_in_store
            else ""
        )
        return (
            f"Preregistration written to {self.path}\nPlan {self.plan_path}\n  sha256 "
            f"{self.plan_sha256} (recorded in the manifest, section `prereg`, "
            f"{self.at}){warning}"
        )


class StudyFacts(TypedDict):
    """The study as it stands when the plan is registered."""

    study_id: str
    topics: int
    prompts: int
    outputs: int  # that succeeded
    items: int
    reviews: int
    reviewers: dict[str, int]  # kind -> reviewers
    samples: int | None  # most outputs per prompt and model
    models: list[str]
    pilot: bool
    demo: bool


@writes_study
def prereg(study_dir: str | Path, plan: str | Path | None = None) -> PreregResult:
    """Write `prereg.md` in the study folder and record the plan's hash in the manifest."""
    folder = Path(study_dir)
    loaded = load_plan(plan)
    with Study.open(folder) as study:
        facts = _facts(study)
    manifest = read_manifest(folder)
    at = utc_now()
    text = render(loaded, manifest.blinding, facts, at, manifest.materials)
    path = folder / PREREG_NAME
    tmp = path.with_name(PREREG_NAME + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    record_materials(folder, "analysis", {"plan.yaml": Path(loaded.path)})
    record_section(
        folder, "prereg", Prereg(plan_sha256=loaded.sha256, plan_path=loaded.path, at=at)
    )
    record_command(folder, "prereg", {"plan": loaded.path})
    return PreregResult(path, loaded.path, loaded.sha256, at, facts["reviews"], text)


def _facts(study: Study) -> StudyFacts:

    counts = store_counts(study)
    return {
        "study_id": study.study_id,
        "topics": counts.topics,
        "prompts": counts.prompts,
        "outputs": counts.outputs_ok,
        "items": counts.items,
        "reviews": counts.reviews,
        "reviewers": reviewer_kinds(study),
        "samples": most_samples(study),
        "models": output_models(study),
        "pilot": study.pilot,
        "demo": study.meta("demo") == "1",
    }


def power_lines(plan: Plan, topics: int) -> list[str]:
    """The power analysis of prereg.md for `topics` topics under the plan's assumptions."""
    p = plan.planning
    alpha, sesoi = plan.primary.alpha, plan.equivalence.sesoi
    try:
        p10, p01 = discordant(p.p_single + p.effect, p.p_single, p.rho)
    except HarnessError as error:
        return [f"Power analysis not possible with the plan's assumptions: {error.message}."]
    sd = sd_binary_difference(p.p_single + p.effect, p.p_single, p.rho)
    sd_eq = sd_binary_difference(p.p_single, p.p_single, p.rho)  # TOST: no true difference
    lines = [
        f"Assumptions (plan `planning`): proportion judged novel after single-field prompts "
        f"{p.p_single:g}, effect to detect {p.effect:+g}, correlation of a topic's arms "
        f"{p.rho:g}; one-sided alpha {alpha:g}; target power {p.power:.0%}; SESOI {sesoi:g}.",
        f"- McNemar on the consensus table (Connor 1987): discordant probabilities "
        f"p10 = {p10:.4f}, p01 = {p01:.4f}; power with {topics} topics "
        f"{mcnemar_power(topics, p10, p01, alpha):.3f}; topics needed "
        f"{_safe(lambda: mcnemar_sample_size(p10, p01, alpha, p.power))}.",
        f"- Paired difference, normal approximation (SD of d {sd:.3f}): power "
        f"{paired_power(topics, p.effect, sd, alpha):.3f}; topics needed "
        f"{_safe(lambda: paired_sample_size(p.effect, sd, alpha, p.power))}.",
        f"- Equivalence within +/-{sesoi:g} when the true difference is 0 (TOST; both arms "
        f"at {p.p_single:g}, SD of d {sd_eq:.3f}): power "
        f"{tost_power(topics, sd_eq, sesoi, 0.0, alpha):.3f}; topics needed "
        f"{_safe(lambda: tost_sample_size(sd_eq, sesoi, 0.0, alpha, p.power))}.",
        "These use one binary consensus per topic and arm. Several reviewers and samples per "
        "topic lower the SD of d; `harness power --simulate` simulates the full design "
        "(topic, topic-by-condition, sample and reviewer effects) through the exact primary "
        "analysis.",
    ]
    share = plan.adjudication.topics
    if share:
        lines.append(
            f"The verdict does not rest on these: it rests on the prediction-powered test on the "
            f"adjudicated scale (plan `adjudication`: {share:g} "
            f"{'of the topics' if isinstance(share, float) else 'topics'}, {plan.adjudication.interval} "
            f"interval), whose topic count is the one to plan by: `harness power --adjudicated "
            f"{share:g}` gives it before the study, and the report's Power section reads it off "
            "the study's own interval."
        )
        lines.append(_differential_line(plan.adjudication.differential_error))
    return lines


def _differential_line(mode: str) -> str:
    rule = {
        "require": "a `supported` or `refuted` that is not robust is `inconclusive`",
        "report": "a `supported` says whether it is robust; a `refuted` needs no more",
        "auto": (
            "where the adjudicators' controls include both forms, published and unpublished, "
            "a `supported` or `refuted` that is not robust is `inconclusive`; where they do not "
            "(the bundled bank has no unpublished single-field control at a cut-off after "
            "1999), the error is not measured and a `supported` says so"
        ),
    }[mode]
    return (
        "Errors of the adjudicators that depend on the condition are estimated from their "
        "cross-field and single-field controls: the gap (cross-field minus single-field) in "
        "their rate of calling published controls novel, and the same on unpublished controls, "
        "weighted by the adjudicators' shares (with a majority, on the majority's scale), each "
        "with the variance of smoothed rates times the design effect of controls judged by "
        "several adjudicators. Together they give the bias such errors add where "
        "there is no true difference, b = (1 - pi_s) x the published gap + pi_s x the "
        "unpublished gap, pi_s the single-field arm's novel rate corrected by the single-field "
        "controls (delta method; without it, the larger gap). A `supported` is robust to them "
        "when the adjudicated difference exceeds 0 and b, each by a one-sided test at alpha of "
        "the difference minus b with both uncertainties (intersection-union: no split of "
        "alpha). A `refuted` is robust to them when the true difference corrected for them, "
        "(the difference - b at the cross-field arm's rate) / the single-field controls' J, "
        "is shown below +SESOI too (Fieller's upper limit at one-sided alpha): errors against "
        "the hypothesis lower the difference without a lower true one. "
        f"`adjudication.differential_error: {mode}`: {rule}."
    )


def _safe(compute: Callable[[], float]) -> str:
    try:
        value = compute()
    except HarnessError as error:
        return f"n/a ({error.message})"
    return str(value) if math.isfinite(value) else "n/a"


def render(
    loaded: LoadedPlan,
    blinding: Blinding | None,
    facts: StudyFacts,
    at: str,
    materials: dict[str, dict[str, MaterialFile]] | None,
) -> str:
    """prereg.md: the plan, the study as it stands, and the manifest's blinding commitment and
    materials."""
    plan = loaded.plan
    topics = facts["topics"] or plan.planning.topics
    reviewers = ", ".join(f"{n} {k}" for k, n in sorted(facts["reviewers"].items())) or "none yet"
    lines = [
        "# Preregistration",
        "",
        f"Study `{facts['study_id']}`, registered {at}.",
        "",
    ]
    if facts["demo"]:
        lines += [
            "> **Demonstration study: a 135M-parameter model and a demonstration corpus; "
            "its result demonstrates the machinery, not evidence.**",
            "",
        ]
    if facts["reviews"]:
        lines += [
            f"> **Warning: {facts['reviews']} reviews were already in the store when this "
            "was written.**",
            "",
        ]
    lines += [
        "## Hypothesis",
        "",
        plan.hypothesis,
        "",
        "## Design",
        "",
        f"- Topics: {facts['topics']} (minimum for a verdict: {plan.minimum.topics}); "
        f"conditions single_a, single_b, cross per topic; prompts: {facts['prompts']}.",
        f"- Outputs: {facts['outputs']} (up to {facts['samples'] or 0} per prompt and model) from "
        f"{', '.join(facts['models']) or 'no model yet'}.",
        f"- Items (real and control): {facts['items']}; reviewers: {reviewers}; at least "
        f"{plan.minimum.reviewers_per_item} reviewers' verdicts per real item.",
        f"- Pilot: {facts['pilot']}.",
        "",
        "## Blinding",
        "",
    ]
    if blinding is not None and blinding.record():  # an empty section: no packets either
        lines += [
            f"Commitment (SHA-256 of the item -> output -> condition key, "
            f"{blinding.n_items} items, made {blinding.made_at}):",
            "",
            f"    {blinding.sha256}",
            "",
        ]
    else:
        lines += [
            "No packets yet: the commitment is made with `harness judge --blind` and "
            "recorded in the manifest, section `blinding`.",
            "",
        ]
    lines += ["## Reviewer accuracy (control items)", ""] + controls_lines(plan) + [""]
    lines += ["## Several models", ""] + models_lines(plan, len(facts["models"])) + [""]
    lines += ["## Materials", ""] + _materials(materials) + [""]
    lines += [
        "## Analysis plan",
        "",
        f"File `{loaded.path}`",
        "",
        f"SHA-256 `{loaded.sha256}`",
        "",
        "```yaml",
        loaded.text.rstrip(),
        "```",
        "",
    ]
    lines += [f"## Power analysis for {topics} topics", ""] + power_lines(plan, topics) + [""]
    if plan.adjudication.enabled:
        outputs = (facts["samples"] or plan.planning.design.samples) * max(len(facts["models"]), 1)
        lines += ["## Can this design decide?", ""] + decide_lines(plan, topics, outputs) + [""]
    return "\n".join(lines)


def decide_lines(plan: Plan, topics: int, outputs: int) -> list[str]:
    """Whether the verdict's own rule can decide at this design, before any review, and the
    cheapest design that can (`planning.decisive_design`)."""
    with status("simulating what this design can decide"):
        found = study_power(plan, topics, outputs)
    return study_power_lines(found, plan.equivalence.sesoi)


def models_lines(plan: Plan, models: int) -> list[str]:
    """How several models enter the primary analysis (plan `models.primary`)."""
    if plan.models.primary == "pooled":
        rule = (
            "pooled: the primary test relabels each topic's conditions on its proportions "
            "averaged over models (labels move only within a topic, for all models at once); "
            "each model's test with Holm's adjustment and its verdict are reported beside the "
            "verdict, which stays the pooled one."
        )
    else:
        rule = (
            f"per_model: a model is `supported` when its one-sided relabelling test is "
            f"significant after Holm over the models (alpha {plan.primary.alpha:g}), `refuted` "
            f"when the reviewers pass the J gate and its own differences lie inside the "
            f"corrected margin (TOST at alpha/2 against {plan.equivalence.sesoi:g} times J's "
            f"lower bound) or its test is significant the other way; the study is `supported` "
            f"when any model is, `refuted` only when every model is, `inconclusive` otherwise."
        )
    count = f"{models} models so far" if models else "no model yet"
    lines = [f"- Primary analysis across models ({count}): {rule}"]
    if models == 1:
        lines.append("- With one model the choice has no effect (the report says so).")
    return lines


def _unsure_limit_line(limit: float) -> str:
    if limit >= 1:
        return "- Automated reviewers have no limit on their share of `unsure` reviews."
    return (
        f"- An automated reviewer whose share of `unsure` reviews passes {limit:g} (a model "
        "that does not follow its reply protocol has every review recorded as unsure) is "
        "stopped, and its reviews enter the analysis only if the user accepts them, which the "
        "manifest and the report record."
    )


def controls_lines(plan: Plan) -> list[str]:
    """What the plan fixes about control items and how accuracy enters the verdict."""
    c, p = plan.controls, plan.planning
    unsure = plan.outcome.unsure.replace("_", " ")

    def needed() -> float:
        return (
            controls_needed(p.sensitivity, p.specificity, c.min_youden, c.level, p.power)
            or math.inf
        )

    needed_text = _safe(needed)
    assumed_j = p.sensitivity + p.specificity - 1
    why_na = (
        " (n/a: the assumed J is not above it)"
        if needed_text == "n/a" and assumed_j <= c.min_youden
        else ""
    )
    return [
        f"- Each reviewer judges control items with a known answer, mixed into the blinded "
        f"stream: a share {c.share:g} of the reviewer's real items ({c.adjudicators:g} for "
        f"adjudicators) and at least "
        f"{c.min_per_reviewer}, about half published before the cut-off (correct: "
        f"`published`) and half not (correct: `not_published`).",
        f"- Coding as the outcome (`unsure` counted as {unsure}). Sensitivity: published "
        f"controls judged not novel; specificity: unpublished controls judged novel; "
        f"J = sensitivity + specificity - 1, with exact (Clopper-Pearson) intervals at "
        f"{c.level:.0%}; J's interval joins both at {1 - (1 - c.level) / 2:.1%} (Bonferroni).",
        f"- A share {c.calibration_share:g} of the controls calibrates automated reviewers; "
        f"their accuracy is measured on the other, held-out controls only.",
        _unsure_limit_line(plan.outcome.max_unsure_share),
        f"- Reviewers whose J estimate is below {c.exclude_reviewer_below:g} are left out of "
        f"every analysis (decided now, before unblinding).",
        f"- `refuted` requires the exact lower bound of J (every reviewer's accuracy weighted by "
        f"their share of the real judgments) to be at least "
        f"{c.min_youden:g} and equivalence within +/-{plan.equivalence.sesoi:g} on the scale "
        f"corrected for misclassification ({c.correction} correction; the observed differences "
        f"are tested against the SESOI times J's one-sided lower bound, alpha split equally "
        f"between the two). Without that the verdict is `inconclusive`. `supported` stays the "
        f"one-sided primary test on the observed scale, with a test of differential accuracy "
        f"(cross-field vs single-field controls, Fisher exact) reported beside it.",
        f"- The corrected difference is reported with a percentile bootstrap interval over "
        f"topics and control judgments ({c.bootstrap} resamples, seed {c.seed}).",
        f"- Planning assumes sensitivity {p.sensitivity:g} and specificity {p.specificity:g} "
        f"(J {p.sensitivity + p.specificity - 1:.2f}); about "
        f"{needed_text} control judgments let J's exact lower bound reach "
        f"{c.min_youden:g} with probability {p.power:g}{why_na}, "
        "assuming equal shares of the real judgments and equal controls per reviewer (design "
        "effect 1); uneven shares need the design effect (sum_r n_r) sum_r (w_r^2 / n_r) times "
        "as many.",
    ]


def _materials(materials: dict[str, dict[str, MaterialFile]] | None) -> list[str]:
    materials = materials or {}
    rows = ["| role | file | sha256 |", "|---|---|---|"]
    for role, files in sorted(materials.items()):
        for name, entry in sorted(files.items()):
            rows.append(f"| {role} | {name} | `{entry.sha256}` |")
    return rows if len(rows) > 2 else ["No materials recorded in the manifest yet."]
