"""`report/`: report.md, a self-contained report.html, report.json (every number) and figures."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import JsonValue

from harness.analysis.plan.plan_file import Plan
from harness.analysis.plan.primary_tests import primary_test
from harness.analysis.report.adjudication_section import adjudication_blocks
from harness.analysis.report.figures import caption, figure_names, render_all
from harness.analysis.report.lead import build_lead
from harness.analysis.report.render import Block, html_page, markdown
from harness.analysis.report.results import (
    AccuracyRow,
    AnalysisResult,
    ControlsDifference,
    ControlsResult,
    Estimate,
    ModelsResult,
    fmt,
    fmt_p,
    verdict_basis,
    verdict_estimate,
)
from harness.analysis.report.steps_section import steps_blocks
from harness.models.configurations import wording
from harness.study.records import JsonObject

MAX_TOPIC_ROWS = 200
MAX_PAIR_ROWS = 60
EXPLORER = "explorer.html"  # written beside the report by `analyze` (harness.explore)


def write_report(
    result: AnalysisResult, folder: Path, plan: Plan, plan_text: str
) -> AnalysisResult:
    """Write every report file (each via a temporary file and rename); return the result with
    `report_files` filled in."""
    figure_dir = folder / "figures"
    figure_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "markdown": str(folder / "report.md"),
        "html": str(folder / "report.html"),
        "json": str(folder / "report.json"),
        "explorer": str(folder / EXPLORER),
    }
    files.update(
        {f"figure:{name}": str(figure_dir / f"{name}.png") for name in figure_names(result)}
    )
    result = result.model_copy(update={"report_files": files})
    figures = render_all(result, plan.report.figure_dpi)
    for name, data in figures.items():
        _write(figure_dir / f"{name}.png", data)
    blocks = build_blocks(result, plan, plan_text)
    _write(folder / "report.md", markdown(blocks).encode("utf-8"))
    _write(
        folder / "report.html", html_page(blocks, figures, "Preregistered analysis").encode("utf-8")
    )
    _write(folder / "report.json", result.model_dump_json(indent=1).encode("utf-8"))
    return result


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def build_blocks(r: AnalysisResult, plan: Plan, plan_text: str) -> list[Block]:
    """The report opens with the verdict and the figure of its estimate; the notes that qualify
    it follow, then the rest of the verdict and the sections."""
    blocks = [Block("h1", "Preregistered analysis: cross-field versus single-field prompts")]
    blocks += [_lead(r)]
    blocks += [
        Block(
            "link",
            "Explore every record (prompts, outputs, items, verdicts, searches)",
            name=EXPLORER,
        )
    ]
    blocks += _verdict(r) + adjudication_blocks(r) + _design(r) + _method(r, plan)
    blocks += _primary(r) + _models(r) + _accuracy(r)
    blocks += _checks(r) + steps_blocks(r)
    blocks += _secondary(r) + _reviewers(r) + _power(r) + _verification(r)
    blocks += [Block("h2", "Figures")]
    blocks += [
        Block("figure", caption(r, name), name=name)
        for name in figure_names(r)
        if name != LEAD_FIGURE
    ]
    blocks += _topics(r)
    blocks += [Block("h2", "The analysis plan as executed"), Block("pre", plan_text.rstrip())]
    return blocks


LEAD_FIGURE = "verdict"  # drawn in the lead, beside the verdict, not among the figures


def _lead(r: AnalysisResult) -> Block:
    """The verdict line, the estimate it rests on, the qualifier and the report's notes, beside
    the figure of that estimate."""
    v = r.verdict
    basis = ("provisional: " if v.basis == "provisional" else "") + v.basis_note
    title = f"**{v.label.upper()}**" + (f" ({basis})" if basis else "")
    children = [Block("p", f"{title}: {v.reason}.")]
    if v.qualifier:
        children.append(Block("p", f"Note: {v.qualifier}."))
    children += [Block("banner", note) for note in r.notes]
    return Block("lead", "Verdict", name=LEAD_FIGURE, children=children, lead=build_lead(r))


def _verdict(r: AnalysisResult) -> list[Block]:
    """The verdict's details, after the lead: what it rests on, power, the literal rule."""
    v = r.verdict
    out = []
    rests_on = verdict_basis(r)
    if rests_on:
        out.append(Block("p", f"The verdict rests on {rests_on}."))
    p = r.power
    if v.basis == "adjudicated" and p.verdict_supported is not None:
        out.append(Block("p", _verdict_power(r)))
    elif v.label in ("inconclusive", "no verdict") and p.power_at_sesoi is not None:
        out.append(
            Block(
                "p",
                (
                    f"Power achieved, on the observed scale as if the reviewers were perfect: with "
                    f"{p.n_topics} topics this design had "
                    f"{p.power_at_sesoi:.0%} power to detect a difference of {p.sesoi:g} and "
                    f"{p.equivalence_power:.0%} power to show equivalence were the true difference 0. "
                    f"The paired t-test on the primary reviewers' scale would need about "
                    f"{p.topics_needed} topics to detect the SESOI with {p.target:.0%} power, or "
                    f"{p.topics_needed_equivalence} to show equivalence ({p.basis}); "
                    + _verdict_test(r)
                ),
            )
        )
    out.append(
        Block(
            "p",
            (
                f"The hypothesis author's literal rule (a significant difference in pooled proportions "
                f"on at least {_plan_value(r, 'literal_rule', 'min_topics')} topics, else refuted) says: "
                f"**{v.literal_label}**: {v.literal_reason}. It counts judgments as independent and "
                f"treats a non-significant result as a refutation, which is why it is not the "
                f"preregistered verdict."
            ),
        )
    )
    return out


def _models(r: AnalysisResult) -> list[Block]:
    m = r.models
    if m is None:
        return []
    rows = [
        [
            x["model"],
            str(x["topics"]),
            fmt(x["estimate"], signed=True),
            f"[{fmt(x['ci_low'], signed=True)}, {fmt(x['ci_high'], signed=True)}]",
            fmt_p(x["p_greater"]),
            fmt_p(x["p_holm"]),
            str(x.get("verdict") or ("supported" if x["supported"] else "not supported")),
        ]
        for x in m.models
    ]
    one, many = (
        ("configuration", "configurations") if m.kind == "configurations" else ("model", "models")
    )
    role = (
        f"the verdict follows them (per_model: supported when any {one} is, refuted only when "
        f"every {one} is)"
        if m.primary == "per_model"
        else f"per-{one} verdicts are secondary to the pooled one"
    )
    text = (
        f"Primary analysis across {many}, fixed in the plan: {m.primary}. "
        f"Each {one}'s difference on the {m.topics} topics complete in every {one}, with "
        f"its one-sided relabelling test and Holm's adjustment over {many} (alpha "
        f"{m.alpha:g}); {role}. Pooled over "
        f"{many} (relabelling the conditions of a topic for all {many} at once): "
        f"{fmt(m.pooled_estimate, signed=True)}, p = {fmt_p(m.pooled_p_greater)} "
        f"({m.pooled_method}). Heterogeneity{_across(m)}: Cochran's Q = {fmt(m.q)} on {m.q_df} "
        f"df, I^2 = {fmt(m.i2)} (descriptive: the {many} share topics)"
    )
    if m.interaction_p is not None and m.interaction_df:
        a, b = m.interaction_df
        text += (
            f"; {one}-by-condition interaction (Hotelling's T^2 on paired contrasts): "
            f"F({a}, {b}) = {fmt(m.interaction_f)}, p = {fmt_p(m.interaction_p)}"
        )
    return [
        Block("h2", m.heading),
        Block("p", text + _leak_models(m, one) + "."),
        Block(
            "table",
            header=[one, "topics", "difference", "interval", "p", "Holm p", "verdict"],
            rows=rows,
        ),
    ]


def _across(m: ModelsResult) -> str:
    """Where the heterogeneity lies: between models, or between settings of one model."""
    if m.kind == "configurations":
        return f" across configurations of one model ({m.of_model}), i.e. across its settings"
    return ""


def _leak_models(m: ModelsResult, one: str) -> str:
    leak = m.leak_auc or {}
    pairs = [
        f"{label} {a:.3f} [{lo:.3f}, {hi:.3f}]"
        for label, a, lo, hi in zip(
            _series(leak, "labels"),
            _series(leak, "auc"),
            _series(leak, "ci_low"),
            _series(leak, "ci_high"),
            strict=False,
        )
        if a is not None and lo is not None and hi is not None
    ]
    if not pairs:
        return ""
    return (
        f". Leak audit: a classifier tells a {one}'s items from the others' with AUC "
        + "; ".join(pairs)
        + f" (0.5: indistinguishable; packets never name a {one})"
    )


def _series(record: JsonObject, key: str) -> list[JsonValue]:
    """One list of the leak audit's per-model record; none where it has none."""
    values = record.get(key)
    return values if isinstance(values, list) else []


def _plan_value(r: AnalysisResult, section: str, key: str) -> JsonValue:
    """One setting of the plan the result was analysed with."""
    part = r.plan[section]
    assert isinstance(part, dict), f"plan section {section!r} is not a mapping"
    return part[key]


def _accuracy(r: AnalysisResult) -> list[Block]:
    c = r.controls
    if c is None:
        return []
    out = [
        Block("h2", "Reviewer accuracy on control items"),
        Block(
            "p",
            (
                f"Control items have a known answer and were mixed into the blinded stream. "
                f"Sensitivity: share of published controls judged not novel; specificity: share of "
                f"unpublished controls judged novel; J = sensitivity + specificity - 1. Intervals are "
                f"exact (Clopper-Pearson) at {c.level:.0%}; J's interval joins the two exact intervals "
                f"at {1 - (1 - c.level) / 2:.1%} each (Bonferroni). Automated reviewers are scored on "
                f"held-out controls only. {_scored_text(c)} "
                f"The verdict uses the last row: every reviewer's accuracy weighted by their share of "
                f"the real judgments, with Kish effective counts. "
                f"{c.gate_reason[:1].upper()}{c.gate_reason[1:]}."
            ),
        ),
    ]
    if c.accuracy and c.available:
        out.append(
            Block(
                "table",
                header=[
                    "reviewer",
                    "kind",
                    "published (correct)",
                    "sensitivity",
                    "unpublished (correct)",
                    "specificity",
                    "J",
                ],
                rows=[_accuracy_row(a) for a in [*c.accuracy, c.weighted]],
            )
        )
    if c.excluded:
        out.append(
            Block(
                "p",
                f"Left out of every analysis (J below "
                f"{c.exclude_below:g}, fixed in the plan): "
                f"{', '.join(c.excluded)}.",
            )
        )
    out.append(Block("p", _corrected_text(c)))
    if c.differential:
        out.append(Block("p", _differential_text(c.differential)))
    if c.leak_auc:
        auc = c.leak_auc
        ci = (
            f" [{auc['ci_low']:.3f}, {auc['ci_high']:.3f}]"
            if "ci_low" in auc and "ci_high" in auc
            else ""
        )
        value = auc.get("auc", auc.get("estimate"))
        if value is not None:
            out.append(
                Block(
                    "p",
                    f"Leak audit: a classifier separates controls from real items "
                    f"with AUC {value:.3f}{ci} (0.5: indistinguishable).",
                )
            )
    if not c.gate_ok and c.needs.text:
        out.append(Block("p", c.needs.text + "."))
    return out


def _scored_text(c: ControlsResult) -> str:
    """How many control judgments the table scores (the pooled row's, as `judge --status`
    counts them per reviewer) and how many of them count for the verdict."""
    pooled = next((a for a in c.accuracy if a["scope"] == "pooled"), None)
    scored = round(pooled["published"] + pooled["unpublished"]) if pooled else c.n_judgments
    counted = f"{c.n_judgments} judgments of {c.n_controls} controls"
    if scored == c.n_judgments:
        return f"{counted} count."
    return (
        f"The table scores {scored} control judgments (the pooled row); {counted} count, "
        "those of the reviewers not left out (the weighted row and the correction)."
    )


def _accuracy_row(a: AccuracyRow) -> list[str]:
    def rate(value: float | None, low: float | None, high: float | None) -> str:
        return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]" if value is not None else "n/a"

    def count(x: float) -> str:  # effective counts of the weighted row are not integers
        return str(x) if float(x).is_integer() else f"{x:.1f}"

    label = a["label"] if a["scope"] == "reviewer" else f"**{a['label']}**"
    return [
        label,
        a["kind"],
        f"{count(a['published'])} ({count(a['published_correct'])})",
        rate(a["sensitivity"], a["sensitivity_low"], a["sensitivity_high"]),
        f"{count(a['unpublished'])} ({count(a['unpublished_correct'])})",
        rate(a["specificity"], a["specificity_low"], a["specificity_high"]),
        rate(a["youden"], a["youden_low"], a["youden_high"]),
    ]


def _corrected_text(c: ControlsResult) -> str:
    if c.corrected is None:
        return f"Corrected difference: not estimable ({c.corrected_note})."
    low = fmt(c.corrected_low, signed=True) if c.corrected_low is not None else "-unbounded"
    high = fmt(c.corrected_high, signed=True) if c.corrected_high is not None else "+unbounded"
    text = (
        f"Corrected difference ({c.correction} Rogan-Gladen / matrix method): "
        f"{fmt(c.corrected, signed=True)}, {c.corrected_level:.0%} interval [{low}, {high}] "
        f"({c.corrected_note}); "
        f"observed {fmt(c.observed, signed=True)}."
    )
    eq = c.equivalence
    if eq is not None and eq.method == "bootstrap":
        text += (
            f" Equivalence on the corrected scale: the interval above tested against "
            f"+/-{eq.sesoi:g} -> {'shown' if eq.equivalent else 'not shown'}."
        )
    elif eq is not None:
        text += (
            f" Equivalence on the corrected scale ({eq.method}): the observed differences "
            f"tested against +/-{eq.sesoi:.4f}"
            + (
                f" (SESOI x lower bound of J, {c.youden_bound:.3f})"
                if c.youden_bound is not None
                else ""
            )
            + f", p = {fmt_p(eq.p_tost)} -> {'shown' if eq.equivalent else 'not shown'}."
        )
    return text


def _differential_text(d: ControlsDifference) -> str:
    flag = (
        "**Warning: accuracy differs in the direction that favours the hypothesis** "
        "(cross-field material called novel more often whatever its truth), so a "
        "`supported` verdict may be manufactured by the reviewers. "
        if d["favours_hypothesis"]
        else ""
    )
    return (
        f"{flag}Differential accuracy (cross-field vs single-field controls, {d['test']}): "
        f"sensitivity {fmt(d['sensitivity_cross'])} vs {fmt(d['sensitivity_single'])} "
        f"({d['published_cross']} vs {d['published_single']} judgments, p = "
        f"{fmt_p(d['p_sensitivity'])}); specificity {fmt(d['specificity_cross'])} vs "
        f"{fmt(d['specificity_single'])} ({d['unpublished_cross']} vs "
        f"{d['unpublished_single']}, p = {fmt_p(d['p_specificity'])})."
    )


def _design(r: AnalysisResult) -> list[Block]:
    d = r.design
    reviewers = ", ".join(f"{n} {k}" for k, n in sorted(d.reviewers.items())) or "none"
    rows = [
        [
            "Topics in the study / with reviews / complete",
            f"{d.topics_in_study} / {d.topics_reviewed} / {d.complete_topics}",
        ],
        [
            "Prompts; outputs (ok); samples per prompt",
            f"{d.prompts}; {d.outputs}; {d.samples_per_prompt}",
        ],
        [
            "Real items: made / reviewed / analysed",
            f"{d.items} / {d.items_reviewed} / {d.items_eligible}",
        ],
        ["Real items left out (too few reviews)", str(d.items_short)],
        [
            "Reviews of real items: primary / adjudicators",
            f"{d.reviews - d.reviews_adjudicator} / {d.reviews_adjudicator}",
        ],
        ["Reviews of control items", str(d.reviews_controls)],
        [
            "Reviews, all (assignments, all)",
            f"{d.reviews + d.reviews_controls} ({d.assignments})",
        ],
        ["Reviewers", reviewers],
        [
            "Primary reviews per analysed real item: mean (min-max)",
            f"{d.reviews_per_item['mean']:.2f} "
            f"({d.reviews_per_item['min']:.0f}-{d.reviews_per_item['max']:.0f})",
        ],
        _models_row(d.models),
        ["Pilot / demonstration / simulated", f"{d.pilot} / {d.demo} / {d.simulated}"],
    ]
    return [Block("h2", "Design"), Block("table", header=["", "value"], rows=rows)]


def _models_row(keys: list[str]) -> list[str]:
    words = wording(keys)
    of = f" (of {words.of_model})" if words.of_model else ""
    return [words.kind.capitalize(), (", ".join(keys) + of) or "n/a"]


def _method(r: AnalysisResult, plan: Plan) -> list[Block]:
    unsure = {
        "not_novel": "counted as not novel (an unsure verdict is not a judgment that the "
        "combination is unpublished)",
        "novel": "counted as novel",
        "exclude": "left out",
    }[plan.outcome.unsure]
    single = {
        "mean_of_singles": "the mean of the single_a and single_b proportions, so each "
        "single field weighs the same whatever its number of outputs",
        "single_a": "the single_a proportion only",
        "single_b": "the single_b proportion only",
    }[plan.single]
    primary = _primary_method(plan)
    items = [
        "Unit of analysis: the topic. Conditions are matched within topics and reviewers are "
        "crossed with items, so judgments are never treated as independent in the primary test.",
        f"Outcome: a judgment is novel when its verdict is `not_published`; `unsure` is {unsure}.",
        "Per item, the score is the mean of its reviewers' coded verdicts; per topic and "
        "condition, the proportion judged novel is the mean of its items' scores.",
        f"Single-field arm: {single}. The paired difference of topic t is d_t = p_cross - "
        "p_single.",
        f"Items with fewer than {plan.minimum.reviewers_per_item} reviewers' verdicts are left "
        "out; a topic is complete when each compared arm keeps at least one item. Fewer than "
        f"{plan.minimum.topics} complete topics, or a pilot study, gets no verdict.",
        f"Primary test (one-sided, alpha {plan.primary.alpha:g}, cross > single): {primary}",
        f"Equivalence: two one-sided tests ({plan.equivalence.method}) against the SESOI of "
        f"{plan.equivalence.sesoi:g}; the hypothesis is refuted when "
        + (
            "equivalence is shown"
            if plan.equivalence.refute_by == "equivalence"
            else "non-superiority is shown (difference below +SESOI)"
        )
        + " or the primary test is significant in the other direction.",
        f"Consensus table (McNemar, Tango): an arm is novel when its proportion exceeds "
        f"{plan.consensus.threshold:g}"
        + (
            "; the single arm of each topic is one of its two single-field conditions drawn at "
            "random (plan seed), since a mean of two conditions would cross the threshold less "
            "often than the cross arm and bias the table"
            if plan.single == "mean_of_singles"
            else ""
        )
        + ". The conditional logit uses each item's consensus.",
        "Checks of the primary analysis: " + ", ".join(plan.check_tests) + ".",
        f"Secondary analyses ({', '.join(plan.secondary.analyses)}): "
        + ("Holm-corrected together" if plan.secondary.correction == "holm" else "uncorrected")
        + f"; GEE and conditional logit use a random subsample of "
        f"{plan.secondary.heavy_max_topics} topics and the mixed model one of "
        f"{plan.secondary.mixed_max_topics} when the study has more.",
    ]
    return [Block("h2", "Method (fixed by the plan)"), Block("list", items=items)]


def _primary_method(plan: Plan) -> str:
    """The primary test as the method section describes it (its record's sentence)."""
    return primary_test(plan.primary.test).method(plan)


def _primary(r: AnalysisResult) -> list[Block]:
    p, e = r.primary, r.equivalence
    rows = [
        ["Test", p.description],
        ["Complete topics", str(p.n_topics)],
        ["Mean proportion novel: cross / single", f"{fmt(p.mean_cross)} / {fmt(p.mean_single)}"],
        [
            "Difference (cross - single), 95% CI",
            f"{fmt(p.estimate, signed=True)} "
            f"[{fmt(p.ci_low, signed=True)}, {fmt(p.ci_high, signed=True)}]",
        ],
        [f"One-sided p ({p.p_label}), cross > single", fmt_p(p.p_value)],
        ["One-sided p, cross < single", fmt_p(p.p_less)],
        ["SD of the paired differences", fmt(p.sd_d)],
    ]
    rows += [[k.replace("_", " "), _cell(v)] for k, v in p.details.items()]
    eq_rows = [
        ["SESOI (margin)", f"+/-{e.sesoi:g}"],
        [
            f"{e.ci_level:.0%} interval ({e.method})",
            f"[{fmt(e.ci_low, signed=True)}, {fmt(e.ci_high, signed=True)}]",
        ],
        ["p, H0: difference <= -SESOI", fmt_p(e.p_lower)],
        ["p, H0: difference >= +SESOI (non-superiority)", fmt_p(e.p_upper)],
        ["Equivalence shown (TOST)", str(e.equivalent)],
        ["Non-superiority shown", str(e.non_superior)],
    ]
    heading = (
        "Primary reviewers' scale (a check of the adjudicated estimate)"
        if verdict_estimate(r) is not None
        else "Primary analysis"
    )
    return [
        Block("h2", heading),
        Block("table", header=["", "value"], rows=rows),
        Block("h2", "Equivalence and non-superiority"),
        Block("table", header=["", "value"], rows=eq_rows),
    ]


def _cell(value: object) -> str:
    if isinstance(value, float):
        return fmt_p(value) if value < 1 else f"{value:.4g}"
    return str(value)


def _estimate_rows(estimates: list[Estimate]) -> list[list[str]]:
    rows = []
    for e in estimates:
        signed = e.scale == "difference"
        if e.skipped:
            rows.append([e.label, e.scale, "-", "-", "-", f"not run: {e.skipped}"])
            continue
        rows.append(
            [
                e.label,
                e.scale,
                f"{fmt(e.estimate, signed=signed)} [{fmt(e.ci_low, signed=signed)}"
                f", {fmt(e.ci_high, signed=signed)}]",
                f"{fmt_p(e.p_value)} ({e.p_label})",
                fmt_p(e.p_holm) if e.p_holm is not None else "-",
                e.note,
            ]
        )
    return rows


HEADER = ["analysis", "scale", "estimate [95% CI]", "p", "Holm p", "note"]


def _checks(r: AnalysisResult) -> list[Block]:
    c, lit = r.consensus, r.literal_rule
    checks = [e for e in r.estimates if e.role in ("corrected", "check")]
    consensus = [
        ["cross novel", str(c.both), str(c.cross_only)],
        ["cross not novel", str(c.single_only), str(c.neither)],
    ]
    return [
        Block("h2", "Checks of the primary analysis"),
        Block("table", header=HEADER, rows=_estimate_rows(checks)),
        Block(
            "p",
            f"Consensus table of complete topics (an arm is novel when its proportion "
            f"exceeds {c.threshold:g}):",
        ),
        Block("table", header=["", "single novel", "single not novel"], rows=consensus),
        Block("h2", "The literal rule: pooled proportions"),
        Block(
            "p",
            (
                f"Pooled over judgments, {lit.novel_cross}/{lit.n_cross} ({fmt(lit.p_cross)}) after "
                f"cross-field prompts and {lit.novel_single}/{lit.n_single} ({fmt(lit.p_single)}) "
                f"after single-field prompts; difference {fmt(lit.difference, signed=True)}, "
                f"z = {lit.z:.3f}, {lit.alternative} p = {fmt_p(lit.p_value)} (statsmodels "
                f"proportions_ztest). This test ignores the pairing of conditions within topics and "
                f"the clustering of judgments within items and reviewers. Literal verdict: "
                f"**{lit.label}** ({lit.reason})."
            ),
        ),
    ]


def _secondary(r: AnalysisResult) -> list[Block]:
    rows = _estimate_rows([e for e in r.estimates if e.role == "secondary"])
    return [
        Block("h2", "Secondary analyses"),
        Block(
            "p",
            "None of these can change the verdict. Effects are one-sided (cross > "
            "single); moderator slopes two-sided. Holm's correction runs over all "
            "secondary tests that ran.",
        ),
        Block("table", header=HEADER, rows=rows),
    ]


def _reviewers(r: AnalysisResult) -> list[Block]:
    a = r.agreement
    per = [
        [
            str(x["reviewer_id"]),
            str(x["kind"]),
            str(x["judgments"]),
            fmt(x["novel_cross"]),
            fmt(x["novel_single"]),
            fmt(x["difference"], signed=True),
        ]
        for x in r.per_reviewer
    ]
    overall = [
        ["Items with two or more reviews", str(a.n_items)],
        ["Raw agreement (verdicts)", fmt(a.raw_agreement)],
        [
            f"Fleiss' kappa ({a.fleiss_items} items with {a.fleiss_raters} reviews)",
            fmt(a.fleiss_kappa),
        ],
        ["Krippendorff's alpha, nominal (three verdicts)", fmt(a.alpha_verdicts)],
        ["Krippendorff's alpha, nominal (novel or not)", fmt(a.alpha_outcome)],
    ]
    pairs = [
        [p.reviewer_a, p.reviewer_b, str(p.n_items), fmt(p.agreement), fmt(p.kappa)]
        for p in a.pairs[:MAX_PAIR_ROWS]
    ]
    out = [
        Block("h2", "Reviewers and agreement"),
        Block("p", "Share of each reviewer's verdicts that were novel, by arm (descriptive):"),
        Block(
            "table",
            header=["reviewer", "kind", "judgments", "cross", "single", "difference"],
            rows=per,
        ),
        Block("table", header=["agreement", "value"], rows=overall),
    ]
    if pairs:
        out.append(
            Block(
                "table",
                header=["reviewer", "reviewer", "shared items", "agreement", "Cohen's kappa"],
                rows=pairs,
            )
        )
    if len(a.pairs) > MAX_PAIR_ROWS:
        out.append(Block("p", f"{len(a.pairs) - MAX_PAIR_ROWS} more pairs in report.json."))
    return out


def _verdict_power(r: AnalysisResult) -> str:
    """What this study's design can decide under the verdict's own rule (simulated)."""
    p = r.power
    assert p.verdict_supported is not None and p.verdict_refuted is not None
    cannot = (
        " With no true difference it cannot be expected to refute."
        if p.verdict_refuted < 0.05
        else ""
    )
    return (
        f"**What this design can decide** (the verdict's own rule, simulated on "
        f"{p.verdict_studies} studies per figure with what the study measured): `supported` at a "
        f"true +{p.sesoi:g} in {p.verdict_supported:.0%} of studies, `refuted` at a true 0 in "
        f"{p.verdict_refuted:.0%} ({p.verdict_design}).{cannot} `harness power --adjudicated` "
        "finds the cheapest design that decides."
    )


def _power(r: AnalysisResult) -> list[Block]:
    p, a = r.power, r.adjudication
    lead = []
    if r.verdict.basis == "adjudicated" and p.verdict_supported is not None:
        lead.append(Block("p", _verdict_power(r)))
    if a is not None and a.topics_to_detect is not None and r.verdict.basis == "adjudicated":
        lead += [
            Block(
                "p",
                f"**Topics the verdict's design needs** (a normal approximation around the "
                f"verdict's own interval): about {a.topics_to_detect} topics to detect a true "
                f"difference of {a.sesoi:g} and about {a.topics_for_equivalence} to show "
                f"equivalence when there is none, each with {a.topics_power:.0%} power "
                f"({a.topics_basis}). The figures below, and the control judgments under "
                "Reviewer accuracy, are for the checks, not for the verdict.",
            )
        ]
    if p.power_at_sesoi is None:
        return [Block("h2", "Power"), *lead, Block("p", "Too few topics to estimate power.")]
    return [
        Block("h2", "Power"),
        *lead,
        Block(
            "p",
            (
                f"From the observed SD of the differences ({fmt(p.sd)}; {p.basis}): with "
                f"{p.n_topics} topics the one-sided test at alpha {p.alpha:g} had {p.power_at_sesoi:.0%}"
                f" power to detect a difference of {p.sesoi:g}; {p.topics_needed} topics give "
                f"{p.target:.0%} power. Showing equivalence within +/-{p.sesoi:g} when the true "
                f"difference is 0 had {p.equivalence_power:.0%} power; {p.topics_needed_equivalence} "
                f"topics give {p.target:.0%}. These numbers are for the paired t-test on the "
                f"primary reviewers' observed scale, as if they were perfect; "
                + _verdict_test(r)
                + " `harness power --simulate` simulates the full design."
            ),
        ),
    ]


def _verdict_test(r: AnalysisResult) -> str:
    """Which test the verdict uses, and where its own numbers are: the Power section's and the
    verdict's topic counts differ because they are about different tests."""
    if r.verdict.basis == "adjudicated":
        return (
            "the verdict uses the prediction-powered test (PPI++) on the adjudicated scale "
            "(section Adjudicated scale), whose power depends on the adjudicated sample and the "
            "primary reviewers' accuracy on the real items: `harness power --adjudicated SHARE` "
            "gives that design's power and the topics it needs."
        )
    return (
        "they are upper bounds for the tests the provisional verdict uses, which correct for "
        "the reviewers' accuracy on controls: reviewers with J below 1 shrink a true difference "
        "to J times its size, and `refuted` needs equivalence within the SESOI times the lower "
        f"bound of J, at alpha/2, with the {_plan_value(r, 'equivalence', 'method')} test, so the "
        "verdict needs more topics (see reviewer accuracy)."
    )


def _verification(r: AnalysisResult) -> list[Block]:
    v = r.verification
    blinding = (
        f"verified: the key in the store hashes to the commitment {v.blinding_recorded} "
        f"(made {v.blinding_made_at})"
        if v.blinding_status == "verified"
        else f"NOT verified (no commitment recorded); key now hashes to {v.blinding_computed}"
    )
    prereg = (
        f"preregistered {v.prereg_at} with sha256 {v.prereg_plan_sha256}"
        if v.preregistered
        else "no preregistration record"
    )
    rows = [
        ["Blinding key", blinding],
        ["Plan file", v.plan_path],
        ["Plan sha256", v.plan_sha256],
        ["Preregistration", prereg],
        ["First review in the store", v.first_review_at or "n/a"],
        ["Deviations", "; ".join(v.deviations) or "none"],
        ["Analysed", f"{r.analysed_at} with harness {r.harness_version}"],
    ]
    return [Block("h2", "Verification"), Block("table", header=["", ""], rows=rows)]


def _topics(r: AnalysisResult) -> list[Block]:
    rows = [
        [
            str(t["topic_id"]),
            fmt(t["p_single_a"]),
            fmt(t["p_single_b"]),
            fmt(t["p_cross"]),
            fmt(t["d"], signed=True),
            "yes" if t["complete"] else "no",
        ]
        for t in r.topics[:MAX_TOPIC_ROWS]
    ]
    out = [
        Block("h2", "Per-topic proportions judged novel"),
        Block(
            "table", header=["topic", "single_a", "single_b", "cross", "d", "complete"], rows=rows
        ),
    ]
    if len(r.topics) > MAX_TOPIC_ROWS:
        out.append(
            Block(
                "p",
                f"First {MAX_TOPIC_ROWS} of {len(r.topics)} topics; report.json holds all of them.",
            )
        )
    return out
