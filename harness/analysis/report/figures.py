"""The report's figures as PNG bytes (matplotlib's object API, no pyplot state, no display)."""

from __future__ import annotations

import io
import math
import textwrap

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from harness.analysis.report.lead import (
    AXIS_TITLE,
    Lead,
    LeadRow,
    LeadYouden,
    build_lead,
    tick_label,
    ticks,
)
from harness.analysis.report.results import (
    AnalysisResult,
    Estimate,
    ModelsResult,
    fmt,
    led_estimates,
    verdict_title,
)

CROSS_COLOUR, SINGLE_COLOUR, GREY = "#c0392b", "#2471a3", "#7f8c8d"


def _png(fig: Figure, dpi: int) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


def paired_proportions(result: AnalysisResult, dpi: int) -> bytes:
    """Left: each topic's single vs cross proportion. Right: distribution of d_t."""
    frame = result.topics_frame()
    frame = frame[frame["complete"]]
    fig = Figure(figsize=(10, 4.2))
    left, right = fig.subplots(1, 2)
    x, y = frame["p_single"].to_numpy(float), frame["p_cross"].to_numpy(float)
    rng = np.random.default_rng(0)
    jitter = 0.012 if len(frame) < 2000 else 0.02
    alpha = float(np.clip(30 / max(len(frame), 1), 0.05, 0.8))
    left.scatter(
        x + rng.normal(0, jitter, x.size),
        y + rng.normal(0, jitter, y.size),
        s=14,
        alpha=alpha,
        color=CROSS_COLOUR,
        edgecolors="none",
    )
    left.plot([0, 1], [0, 1], color=GREY, lw=1, ls="--")
    left.set(
        xlim=(-0.05, 1.05),
        ylim=(-0.05, 1.05),
        xlabel="single-field prompts",
        ylabel="cross-field prompts",
        title=f"Proportion judged novel, per topic (n = {len(frame)})",
    )
    left.text(
        0.03,
        0.95,
        "above the line: cross higher",
        transform=left.transAxes,
        fontsize=8,
        va="top",
        color=GREY,
    )
    d = (frame["p_cross"] - frame["p_single"]).to_numpy(float)
    sesoi = result.equivalence.sesoi
    right.axvspan(-sesoi, sesoi, color=GREY, alpha=0.15, label=f"+/- SESOI ({sesoi:g})")
    if d.size:
        right.hist(d, bins=np.linspace(-1, 1, 25), color=SINGLE_COLOUR, alpha=0.8)
        right.axvline(float(d.mean()), color=CROSS_COLOUR, lw=2, label=f"mean d = {d.mean():+.3f}")
    right.axvline(0, color="black", lw=0.8)
    right.set(xlabel="d = cross - single", ylabel="topics", title="Paired differences")
    right.legend(fontsize=8, loc="upper left")
    return _png(fig, dpi)


def estimates(result: AnalysisResult, dpi: int) -> bytes:
    """Every analysis with its interval, one panel per scale."""
    shown = [e for e in led_estimates(result) if not e.skipped and e.estimate is not None]
    scales = [s for s in ("difference", "odds ratio", "slope") if any(e.scale == s for e in shown)]
    heights = [max(1, sum(e.scale == s for e in shown)) for s in scales] or [1]
    fig = Figure(figsize=(10, 1.2 + 0.5 * sum(heights) + 0.6 * len(heights)))
    axes = fig.subplots(len(heights), 1, gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, scale in zip(axes[:, 0], scales, strict=False):
        rows = [e for e in shown if e.scale == scale][::-1]
        _forest(ax, rows, scale, result.equivalence.sesoi)
    if not scales:
        axes[0, 0].text(0.5, 0.5, "no estimable analysis", ha="center", va="center")
        axes[0, 0].set_axis_off()
    fig.subplots_adjust(hspace=0.6)
    return _png(fig, dpi)


def _forest(ax: Axes, rows: list[Estimate], scale: str, sesoi: float) -> None:
    ys = np.arange(len(rows))
    colour = {
        "verdict": "black",
        "primary": CROSS_COLOUR,
        "check": SINGLE_COLOUR,
        "literal": GREY,
        "secondary": "#27ae60",
        "corrected": "#8e44ad",
    }
    for y, e in zip(ys, rows, strict=True):
        assert e.estimate is not None  # the caller draws estimable rows only
        low = e.ci_low if e.ci_low is not None else e.estimate
        high = e.ci_high if e.ci_high is not None else e.estimate
        ax.plot([low, high], [y, y], color=colour[e.role], lw=2)
        ax.plot([e.estimate], [y], "o", color=colour[e.role], ms=6)
    null = 1.0 if scale == "odds ratio" else 0.0
    ax.axvline(null, color="black", lw=0.8)
    if scale == "difference":
        ax.axvspan(-sesoi, sesoi, color=GREY, alpha=0.12)
    if scale == "odds ratio":
        _plain_log_axis(ax)
    ax.set_yticks(ys, [_wrap(e.label, 44) for e in rows], fontsize=8)
    ax.set_title(
        {
            "difference": "Difference in proportion judged novel (cross - single), 95% CI"
            ", shaded: +/- SESOI",
            "odds ratio": "Odds ratios (cross vs single), 95% CI",
            "slope": "Moderator slopes of d_t, 95% CI",
        }[scale],
        fontsize=9,
    )


#: Tick values of a log axis, per decade: enough that a range narrower than a decade (odds
#: ratios from 0.7 to 1.5) still gets three labelled ticks.
_LOG_TICKS = (1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 7.0)


def _plain_log_axis(ax: Axes, most: int = 9) -> None:
    """Log scale with plain tick labels (0.5, 1, 2 rather than powers of ten), at least three
    inside the data's range however narrow, at most `most`."""
    ax.set_xscale("log")
    low, high = ax.get_xlim()
    decades = range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
    ticks = [m * 10.0**k for k in decades for m in _LOG_TICKS if low <= m * 10.0**k <= high]
    if len(ticks) < 3:  # narrower than the steps above: three evenly spaced, rounded
        inner = np.geomspace(low, high, 5)[1:-1]
        ticks = sorted({float(f"{t:.3g}") for t in inner} | set(ticks))
    while len(ticks) > most:  # a wide range: every other tick, ends kept
        ticks = ticks[::2] if ticks[::2][-1] == ticks[-1] else [*ticks[::2], ticks[-1]]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())


def _short(label: str, width: int) -> str:
    return label if len(label) <= width else label[: width - 3] + "..."


def _wrap(label: str, width: int) -> str:
    """A label on as many lines as it needs, never cut."""
    return "\n".join(textwrap.wrap(label, width, break_on_hyphens=False)) or label


def agreement(result: AnalysisResult, dpi: int) -> bytes:
    """Pairwise Cohen's kappa (heatmap) and overall agreement coefficients."""
    a = result.agreement
    fig = Figure(figsize=(10, 4))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1]})
    names = sorted({p.reviewer_a for p in a.pairs} | {p.reviewer_b for p in a.pairs})
    if names:
        index = {n: i for i, n in enumerate(names)}
        grid = np.full((len(names), len(names)), np.nan)
        for p in a.pairs:
            value = np.nan if p.kappa is None else p.kappa
            grid[index[p.reviewer_a], index[p.reviewer_b]] = value
            grid[index[p.reviewer_b], index[p.reviewer_a]] = value
        if len(names) <= 12:
            for (row, col), value in np.ndenumerate(grid):
                if np.isfinite(value):
                    left.text(col, row, f"{value:.2f}", ha="center", va="center", fontsize=7)
        image = left.imshow(grid, vmin=-1, vmax=1, cmap="RdBu")
        labels = [_short(n, 14) for n in names]
        left.set_xticks(range(len(names)), labels, rotation=60, ha="right", fontsize=7)
        left.set_yticks(range(len(names)), labels, fontsize=7)
        fig.colorbar(image, ax=left, shrink=0.8)
        left.set_title("Cohen's kappa per reviewer pair", fontsize=9)
    else:
        left.text(
            0.5, 0.5, "no reviewer pair shares enough items", ha="center", va="center", fontsize=9
        )
        left.set_axis_off()
    values = [
        ("raw\nagreement", a.raw_agreement),
        ("Fleiss'\nkappa", a.fleiss_kappa),
        ("alpha\n(verdicts)", a.alpha_verdicts),
        ("alpha\n(novel or not)", a.alpha_outcome),
    ]
    heights = [v if v is not None else 0.0 for _, v in values]
    right.bar(range(4), heights, color=[SINGLE_COLOUR, SINGLE_COLOUR, CROSS_COLOUR, CROSS_COLOUR])
    for i, (_, v) in enumerate(values):
        right.text(i, (v or 0) + 0.02, "n/a" if v is None else f"{v:.2f}", ha="center", fontsize=8)
    right.set_xticks(range(4), [n for n, _ in values], fontsize=8)
    right.set_ylim(min(-0.1, min(heights) - 0.1), 1.05)
    right.axhline(0, color="black", lw=0.8)
    right.set_title(
        f"Agreement over {a.n_items} items with two or more reviews\n"
        "(alpha: Krippendorff, nominal)",
        fontsize=9,
    )
    return _png(fig, dpi)


def power_curve(result: AnalysisResult, dpi: int) -> bytes:
    p = result.power
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    if p.curve:
        n = [c["topics"] for c in p.curve]
        ax.plot(
            n,
            [c["detect_sesoi"] for c in p.curve],
            color=CROSS_COLOUR,
            label=f"detect a difference of {p.sesoi:g} (one-sided)",
        )
        ax.plot(
            n,
            [c["show_equivalence"] for c in p.curve],
            color=SINGLE_COLOUR,
            label=f"show |difference| < {p.sesoi:g} when it is 0 (TOST)",
        )
        ax.axhline(p.target, color=GREY, ls="--", lw=1, label=f"target {p.target:.0%}")
        ax.axvline(p.n_topics, color="black", lw=1, label=f"this study: {p.n_topics} topics")
        _plain_log_axis(ax)
        ax.legend(fontsize=8, loc="lower right")
        ax.set_title(
            f"Power by number of topics (alpha {p.alpha:g}; SD of differences "
            f"{p.sd:.3f}, as observed)",
            fontsize=9,
        )
    else:
        ax.text(0.5, 0.5, "not enough topics to estimate power", ha="center", va="center")
    ax.set(xlabel="topics", ylabel="power", ylim=(0, 1.02))
    return _png(fig, dpi)


#: one marker per reviewer (hollow, so that reviewers at the same point stay visible)
REVIEWER_MARKERS = ("o", "D", "^", "v", "<", ">", "P", "X", "h", "*")


def accuracy(result: AnalysisResult, dpi: int) -> bytes:
    return _png(accuracy_figure(result), dpi)


def accuracy_figure(result: AnalysisResult) -> Figure:
    """Sensitivity against specificity per reviewer with exact intervals; J = min_youden line.

    Reviewers are told apart by marker and named in a legend beside the axes with their values,
    never by text at the points: reviewers with the same accuracy (common with few controls)
    would print their names over each other."""
    c = result.controls
    fig = Figure(figsize=(8.6, 5))
    ax = fig.subplots()
    rows = [
        a
        for a in (c.accuracy if c else [])
        if a["sensitivity"] is not None and a["specificity"] is not None and a["scope"] != "kind"
    ]
    rows.sort(key=lambda a: a["scope"] != "pooled")  # pooled first, drawn under the reviewers
    for n, a in enumerate(rows):
        pooled = a["scope"] == "pooled"
        colour = "black" if pooled else (CROSS_COLOUR if a["kind"] == "human" else SINGLE_COLOUR)
        x, y = a["specificity"], a["sensitivity"]
        x_low, x_high = a["specificity_low"], a["specificity_high"]
        y_low, y_high = a["sensitivity_low"], a["sensitivity_high"]
        if x is None or y is None or x_low is None or x_high is None:
            continue  # a rate is never without its exact interval
        if y_low is None or y_high is None:
            continue
        ax.errorbar(
            x,
            y,
            xerr=[[x - x_low], [x_high - x]],
            yerr=[[y - y_low], [y_high - y]],
            fmt="s" if pooled else REVIEWER_MARKERS[(n - 1) % len(REVIEWER_MARKERS)],
            color=colour,
            mfc=colour if pooled else "none",
            ms=8 if pooled else 6 + 2 * (n % 3),
            lw=1,
            capsize=2,
            alpha=0.9,
            label=f"{_short(a['label'], 24)}: sens {y:.2f}, spec {x:.2f}",
        )
    grid = np.linspace(0, 1, 50)
    ax.plot(grid, 1 - grid, color=GREY, lw=1, ls=":", label="J = 0 (no discrimination)")
    if c is not None:
        ax.plot(
            grid,
            1 + c.min_youden - grid,
            color=GREY,
            lw=1,
            ls="--",
            label=f"J = {c.min_youden:g} (plan's minimum)",
        )
    if not rows:
        ax.text(0.5, 0.5, "no control items judged: accuracy unknown", ha="center", va="center")
    ax.set(
        xlim=(0, 1.02),
        ylim=(0, 1.02),
        xlabel="specificity (unpublished judged novel)",
        ylabel="sensitivity (published judged not novel)",
    )
    ax.set_aspect("equal")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    ax.set_title("Reviewer accuracy on control items (exact intervals; square: pooled)", fontsize=9)
    return fig


def models(result: AnalysisResult, dpi: int) -> bytes:
    """Forest plot: each model's difference with its interval, and the pooled estimate."""
    m = result.models
    rows = m.models if m else []
    fig = Figure(figsize=(6, 1.2 + 0.45 * max(len(rows), 1)))
    ax = fig.subplots()
    if not rows or m is None:
        ax.text(0.5, 0.5, "one model in this study", ha="center", va="center")
        ax.set_axis_off()
        return _png(fig, dpi)
    for i, x in enumerate(rows):
        if x["estimate"] is None:
            continue
        low = x["ci_low"] if x["ci_low"] is not None else x["estimate"]
        high = x["ci_high"] if x["ci_high"] is not None else x["estimate"]
        ax.errorbar(
            x["estimate"],
            i,
            xerr=[[x["estimate"] - low], [high - x["estimate"]]],
            fmt="o",
            color=CROSS_COLOUR,
            capsize=3,
        )
    if m.pooled_estimate is not None:
        ax.plot(m.pooled_estimate, len(rows), "D", color="black")
    ax.axvline(0, color=GREY, lw=1, ls=":")
    ax.set_yticks(range(len(rows) + 1), [_wrap(x["model"], 30) for x in rows] + ["pooled"])
    ax.invert_yaxis()
    ax.set_xlabel("difference in proportion judged novel (cross - single)")
    ax.set_title(forest_title(m), fontsize=9)
    return _png(fig, dpi)


def forest_title(m: ModelsResult) -> str:
    what = (
        f"Each configuration of {m.of_model}: its difference"
        if m.kind == "configurations"
        else "Each model's difference"
    )
    return f"{what} (interval at 1 - alpha); I^2 = {(m.i2 or 0.0):.0%}"


def verdict(result: AnalysisResult, dpi: int) -> bytes:
    return _png(verdict_figure(build_lead(result), verdict_title(result.verdict)), dpi)


def verdict_figure(lead: Lead, title: str) -> Figure:
    """The lead figure as a PNG (report.md's): the verdict's estimates on one difference axis,
    each with its margin, and J with its lower bound below."""
    heights = [0.75 * len(lead.rows) + 0.55] + ([0.6] if lead.youden else [])
    fig = Figure(figsize=(7.5, sum(heights) + 1.1), layout="constrained")  # labels inside
    axes = fig.subplots(len(heights), 1, gridspec_kw={"height_ratios": heights}, squeeze=False)
    ax = axes[0, 0]
    low, high = lead.axis()
    for y, row in enumerate(lead.rows[::-1]):
        _lead_row(ax, y, row)
    ax.axvline(0, color="black", lw=0.8)
    marks = ticks(low, high)
    ax.set_xticks(marks, [tick_label(t) for t in marks], fontsize=9)
    ax.set_xlim(low, high)
    ax.set_ylim(-0.6, len(lead.rows) - 0.4)
    labels = [_wrap(f"{r.label}: {fmt(r.estimate, signed=True)}", 34) for r in lead.rows[::-1]]
    ax.set_yticks(range(len(lead.rows)), labels, fontsize=9)
    ax.set_xlabel(AXIS_TITLE, fontsize=9)
    ax.set_title(_wrap(title, 70), fontsize=11, loc="left")
    if lead.youden is not None:
        _lead_youden(axes[1, 0], lead.youden)
    return fig


def _lead_row(ax: Axes, y: int, row: LeadRow) -> None:
    if row.margin:
        m = row.margin
        ax.fill_betweenx([y - 0.4, y + 0.4], -m, m, color=GREY, alpha=0.16, lw=0)
        ax.vlines([-m, m], y - 0.4, y + 0.4, colors="#555555", linestyles="--", lw=1)
    if row.low is not None and row.high is not None:
        ax.plot([row.low, row.high], [y, y], color="#222222", lw=1.6)
    if row.inner is not None:
        ax.plot(list(row.inner), [y, y], color="#222222", lw=5, solid_capstyle="butt")
    ax.plot([row.estimate], [y], "o", color=CROSS_COLOUR, ms=8, mec="white")


def _lead_youden(ax: Axes, j: LeadYouden) -> None:
    ax.axvline(j.minimum, color="#555555", ls=":", lw=1.2)
    if j.bound is not None:
        ax.plot([j.bound, j.value], [0, 0], color="#222222", lw=1.6)
        ax.plot([j.bound], [0], "|", color="#222222", ms=12, mew=2)
    ax.plot([j.value], [0], "o", color=CROSS_COLOUR, ms=8, mec="white")
    bound = f"\nlower bound {fmt(j.bound)}" if j.bound is not None else ""
    ax.set_yticks([0], [_wrap(f"{j.who}: {fmt(j.value)}", 34) + bound], fontsize=9)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.5, 0.5)
    ax.tick_params(axis="x", labelsize=9)
    ax.set_xlabel(f"J (dotted: the plan's minimum for the lower bound, {j.minimum:g})", fontsize=9)


FIGURES = {
    "verdict": (verdict, "The verdict's estimate"),
    "estimates": (estimates, "Estimates with 95% intervals for every analysis"),
    "paired_proportions": (paired_proportions, "Per-topic paired proportions judged novel"),
    "agreement": (agreement, "Reviewer agreement"),
    "power": (power_curve, "Power curve"),
    "accuracy": (accuracy, "Reviewer accuracy on control items"),
    "models": (models, "Each model's difference (forest plot)"),
}


def render_all(result: AnalysisResult, dpi: int) -> dict[str, bytes]:
    return {
        name: make(result, dpi)
        for name, (make, _) in FIGURES.items()
        if name in figure_names(result)
    }


def caption(result: AnalysisResult, name: str) -> str:
    """A figure's caption; the forest plot's names configurations of one model as such."""
    if name == "models" and result.models is not None and result.models.kind == "configurations":
        return f"Each configuration's difference, configurations of {result.models.of_model} (forest plot)"
    return FIGURES[name][1]


def figure_names(result: AnalysisResult) -> list[str]:
    """The figures of this result: the forest plot of models only with several models, the
    verdict's only where there is an estimate."""
    return [
        name
        for name in FIGURES
        if (name != "models" or result.models is not None)
        and (name != "verdict" or build_lead(result).rows)
    ]
