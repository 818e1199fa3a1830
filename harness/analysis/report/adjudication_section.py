"""The report's section on the adjudicated scale: the prediction-powered estimate and tests, the
draw, and the primary reviewers' accuracy on the real items."""

from __future__ import annotations

from harness.analysis.report.render import Block
from harness.analysis.report.results import (
    AccuracyRow,
    AdjudicatedModelRow,
    AdjudicationResult,
    AnalysisResult,
    ArmDifference,
    fmt,
    fmt_p,
)


def adjudication_blocks(r: AnalysisResult) -> list[Block]:
    a = r.adjudication
    if a is None:
        return [
            Block("h2", "Adjudicated scale"),
            Block(
                "p",
                "This study has no adjudicated sample: no careful reviewer judged a random "
                "sample of its real items, so the primary reviewers' accuracy on the population "
                "they judged is unknown and the verdict above is provisional. A plan with an "
                "`adjudication:` section and a roster with `role: adjudicator` reviewers make "
                "one (`harness judge --blind` draws it before any review).",
            ),
        ]
    who = "automated" if a.automated_adjudicators else "human"
    out = [
        Block("h2", "Adjudicated scale (prediction-powered)"),
        Block("p", _method_text(a, who)),
        Block("table", header=["", "value"], rows=_rows(a)),
        *_instrument_blocks(a),
    ]
    if a.accuracy:
        out += [
            Block(
                "p",
                "Primary reviewers' accuracy on the real items, against the adjudicated label "
                "of each item whose adjudicators agree (sensitivity: items judged published by "
                "the adjudicators that the reviewer judged not novel; specificity: items judged "
                "unpublished that the reviewer judged novel; exact intervals at "
                f"{a.ci_level:.0%}):",
            ),
            Block("table", header=ACCURACY_HEADER, rows=[_accuracy_row(x) for x in a.accuracy]),
        ]
    if a.models:
        out.append(
            Block(
                "table",
                header=[
                    "model",
                    "adjudicated topics",
                    "difference",
                    "interval",
                    "p",
                    "Holm p",
                    "TOST p",
                ],
                rows=[_model_row(x) for x in a.models],
            )
        )
    if a.differential:
        out.append(Block("table", header=DIFF_HEADER, rows=[_diff_row(x) for x in a.differential]))
    return out


ACCURACY_HEADER = [
    "reviewer",
    "arm",
    "published (correct)",
    "sensitivity",
    "unpublished (correct)",
    "specificity",
]
DIFF_HEADER = [
    "differential accuracy",
    "sensitivity cross / single",
    "Fisher p",
    "specificity cross / single",
    "Fisher p",
    "favours the hypothesis",
]


def _instrument_blocks(a: AdjudicationResult) -> list[Block]:
    """The adjudicators measured on the planted controls in their own packets."""
    head = Block("h2", "The adjudicators measured (planted controls)")
    gate = "They were shown to discriminate: " if a.adjudicator_gate else ""
    text = (
        f"The adjudicators are the verdict's instrument, so they are measured like everyone "
        f"else: on planted controls mixed into their packets. {gate}"
        f"{a.adjudicator_reason[:1].upper()}{a.adjudicator_reason[1:]}. Errors that do not "
        "depend on the condition shrink the difference they see by their J; "
        + (JOINT if a.rule == "joint" else BETTING)
    )
    if a.tiers_disagree:
        text += (
            f" But {a.tiers_disagree}; the difference divided by J is therefore not given, "
            "and `refuted` is out of reach."
        )
    rows = _joint_rows(a) if a.rule == "joint" else _betting_rows(a)
    out = [head, Block("p", text), Block("table", header=["", "value"], rows=rows)]
    if a.adjudicator_accuracy:
        out += [
            Block(
                "p",
                "Each adjudicator's accuracy on their controls (exact intervals; per arm where "
                "controls of both forms exist):",
            ),
            Block(
                "table",
                header=ACCURACY_HEADER,
                rows=[_accuracy_row(_as_adjudicators(x)) for x in a.adjudicator_accuracy],
            ),
        ]
    if a.adjudicator_differential:
        row = _diff_row({"label": "adjudicators, pooled", **a.adjudicator_differential})
        out.append(Block("table", header=DIFF_HEADER, rows=[row]))
    if a.differential_error_text:
        out.append(Block("p", f"Differential error: {a.differential_error_text}."))
    return out


def _method_text(a: AdjudicationResult, who: str) -> str:
    return (
        f"{len(a.adjudicators)} {who} adjudicators judged every item of {a.topics_sampled} "
        f"topics drawn at random ({a.draw.get('method', 'seeded draw')}, seed "
        f"{a.draw.get('seed', 'n/a')}) before any review; the draw is sealed in the blinding "
        f"key. The primary reviewers judged every item. The estimate of the mean per-topic "
        f"difference on the adjudicators' scale is {a.estimator.upper()} (Angelopoulos et "
        f"al. 2023): the adjudicated mean corrected by the primary reviewers' difference on all "
        f"topics, weighted by lambda = {a.lam:.2f}; it is unbiased whatever the primary "
        f"reviewers' accuracy, which only sets its precision. Adjudicators' verdicts on an item "
        f"combine by {a.combine}. Estimand: {a.estimand or 'the mean adjudicated difference'}. "
        f"Tests and intervals: {a.method or a.interval}."
    )


def _reads(a: AdjudicationResult) -> bool:
    """The report's interval is the one `refuted`'s tests at alpha / 2 read."""
    return bool(abs(a.ci_level - (1 - a.alpha)) < 1e-9)


def _rows(a: AdjudicationResult) -> list[list[str]]:
    ci = f"[{fmt(a.ci_low, signed=True)}, {fmt(a.ci_high, signed=True)}]"
    tost = f"[{fmt(a.tost_low, signed=True)}, {fmt(a.tost_high, signed=True)}]"
    rows = [
        ["topics: adjudicated / primary only", f"{a.topics_labelled} / {a.topics_unlabelled}"],
        ["difference (adjudicated scale)", f"{fmt(a.estimate, signed=True)} (SE {fmt(a.se)})"],
        [
            f"{a.ci_level:.0%} interval ({a.interval}"
            + ("; `refuted`'s tests at alpha/2 read it)" if _reads(a) else ")"),
            ci,
        ],
        [f"{1 - 2 * a.alpha:.0%} interval (the one-sided test at alpha reads it)", tost],
        ["one-sided p (cross > single)", fmt_p(a.p_greater)],
        ["one-sided p (cross < single)", fmt_p(a.p_less)],
        [
            f"TOST p inside +/-{a.sesoi:g} (as if the adjudicators were perfect; not the "
            "verdict's test, which reads the margin below)",
            fmt_p(a.p_tost),
        ],
        [
            "adjudicated topics alone",
            f"{fmt(a.classical_estimate, signed=True)} (SE {fmt(a.classical_se)})",
        ],
        ["effective adjudicated topics", fmt(a.effective_topics, 1)],
        ["primary reviewers' mean difference", fmt(a.mean_f, signed=True)],
        ["correlation of d_t and f_t (adjudicated topics)", fmt(a.correlation, 2)],
    ]
    if a.missing:
        rows.append(["drawn topics lacking adjudication", ", ".join(a.missing[:10])])
    return rows


def _rate(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def _as_adjudicators(x: AccuracyRow) -> AccuracyRow:
    """A row of the adjudicators' table named for them: its reviewers are the adjudicators, and
    their weights are their shares of the adjudicated judgments."""
    if x["scope"] == "reviewer":
        return x
    label = x["label"].replace("real judgments", "adjudicated judgments")
    return {**x, "label": label.replace("reviewers", "adjudicators")}


def _count(x: float) -> str:
    """A count of judgments; the weighted row's are effective counts, not integers."""
    return str(x) if float(x).is_integer() else f"{x:.1f}"


def _accuracy_row(x: AccuracyRow) -> list[str]:
    label = x["label"] if x["scope"] == "reviewer" else f"**{x['label']}**"
    return [
        label,
        x["arm"],
        f"{_count(x['published'])} ({_count(x['published_correct'])})",
        _rate(x["sensitivity"], x["sensitivity_low"], x["sensitivity_high"]),
        f"{_count(x['unpublished'])} ({_count(x['unpublished_correct'])})",
        _rate(x["specificity"], x["specificity_low"], x["specificity_high"]),
    ]


def _diff_row(x: ArmDifference) -> list[str]:
    return [
        x["label"],
        f"{fmt(x['sensitivity_cross'])} / {fmt(x['sensitivity_single'])}",
        fmt_p(x["p_sensitivity"]),
        f"{fmt(x['specificity_cross'])} / {fmt(x['specificity_single'])}",
        fmt_p(x["p_specificity"]),
        "yes" if x["favours_hypothesis"] else "no",
    ]


def _model_row(x: AdjudicatedModelRow) -> list[str]:
    return [
        x["model"],
        str(x["topics_labelled"]),
        fmt(x["estimate"], signed=True),
        f"[{fmt(x['ci_low'], signed=True)}, {fmt(x['ci_high'], signed=True)}]",
        fmt_p(x["p_greater"]),
        fmt_p(x["p_holm"]),
        fmt_p(x["p_tost"]),
    ]


JOINT = (
    "so `refuted` tests the true difference (theirs divided by J) inside +/- SESOI with J's "
    "uncertainty in the same statistic (harness.analysis.statistics.joint), after a gate on J's "
    "score lower bound."
)
BETTING = (
    "so `refuted` needs the difference shown inside the SESOI times J's lower bound, and the "
    "estimate divided by J (the true-scale difference) is given beside theirs."
)


def _joint_rows(a: AdjudicationResult) -> list[list[str]]:
    rows = [
        ["adjudicators' J (weighted)", fmt(a.youden)],
        ["lower bound of J (score interval; the gate)", fmt(a.youden_bound)],
        ["true difference (theirs / J)", fmt(a.corrected_estimate, signed=True)],
        [
            f"{1 - a.alpha:.0%} interval of the true difference (Fieller, J's uncertainty "
            "included; their errors taken not to depend on the condition)",
            f"[{fmt(a.corrected_low, signed=True)}, {fmt(a.corrected_high, signed=True)}]",
        ],
        [f"joint TOST p against +/-{fmt(a.margin)} (decides at alpha)", fmt_p(a.p_tost_margin)],
    ]
    if a.robust_low is not None:
        whose = "; the verdict's interval, as the plan requires" if a.robust_required else ""
        rows += [
            [
                "true difference corrected for their differential error too",
                fmt(a.robust_estimate, signed=True),
            ],
            [
                f"{1 - a.alpha:.0%} interval of it (Fieller, valid whichever way their errors "
                f"depend on the condition{whose})",
                f"[{fmt(a.robust_low, signed=True)}, {fmt(a.robust_high, signed=True)}]",
            ],
        ]
    return rows


def _betting_rows(a: AdjudicationResult) -> list[list[str]]:
    return [
        ["adjudicators' J (weighted)", fmt(a.youden)],
        ["lower bound of J (one-sided alpha/2)", fmt(a.youden_bound)],
        ["equivalence margin on their scale (SESOI x bound)", fmt(a.margin)],
        ["TOST p against that margin (decides at alpha/2)", fmt_p(a.p_tost_margin)],
        ["difference corrected for their accuracy (/ J)", fmt(a.corrected_estimate, signed=True)],
        [
            f"{1 - 2 * a.alpha:.0%} interval of the corrected difference (at least: a "
            f"{1 - a.alpha:.0%} interval of the difference joined with one of J)",
            f"[{fmt(a.corrected_low, signed=True)}, {fmt(a.corrected_high, signed=True)}]",
        ],
    ]
