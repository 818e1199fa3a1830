"""The report's section on the blinded steps: which model wrote what reviewers read, and how often
its texts failed the fidelity check in each condition."""

from __future__ import annotations

from harness.analysis.report.render import Block
from harness.analysis.report.results import AnalysisResult, BlindedStepsResult, fmt, fmt_p

LABELS = {"extract": "extraction (core combination)", "normalise": "normalisation (display text)"}


def steps_blocks(r: AnalysisResult) -> list[Block]:
    s = r.blinded_steps
    if s is None:
        return []
    out = [Block("h2", "The blinded steps"), Block("p", _intro(s))]
    rows = [
        [
            LABELS.get(x.step, x.step),
            x.group,
            str(x.checked),
            f"{x.failed} ({fmt(x.share_failed)})",
            fmt(x.mean_support),
            str(x.low_support),
            str(x.added),
            str(x.echoed),
            str(x.empty),
            str(x.shown_original),
        ]
        for x in s.rows
    ]
    header = [
        "step",
        "condition",
        "checked",
        "failed",
        "mean support",
        "low support",
        "added claims",
    ]
    header += ["echoed", "empty", "shown original"]
    out.append(Block("table", header=header, rows=rows))
    for t in s.tests:
        out.append(Block("p", _test_text(t.step, t.difference, t.odds_ratio, t.p_value)))
    if s.unchecked:
        out.append(
            Block(
                "p",
                f"{s.unchecked} step record(s) were made before the fidelity check existed and are "
                "not checked: `harness judge --blind` checks them while the study is not routed.",
            )
        )
    return out


def _intro(s: BlindedStepsResult) -> str:
    models = "; ".join(f"{LABELS.get(k, k)}: {', '.join(v)}" for k, v in s.models.items())
    return (
        f"Reviewers read what these steps wrote, not the raw output. Model: {models}. Each text a "
        "step wrote is checked against the output it was made from: its content words must be "
        "found in the output (support, at least the share in each record), it must add no claim "
        "of novelty, prior work or an institution that the output does not make, and it must not "
        "repeat its instruction; a step that wrote nothing counts as failed. A text that "
        "fails is not shown: reviewers see the original "
        "output for that step (no core combination, or the unrewritten text). A difference in "
        "failure rates between conditions would mean the steps treat the conditions differently."
    )


def _test_text(step: str, diff: float, odds: float | None, p: float) -> str:
    ratio = f", odds ratio {odds:.2f}" if odds is not None else ""
    return (
        f"{LABELS.get(step, step).capitalize()}: share failed cross minus single "
        f"{diff:+.3f}{ratio}, Fisher's exact test p = {fmt_p(p)} (items counted as independent: "
        "a screen)."
    )
