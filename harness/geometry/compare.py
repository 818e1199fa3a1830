"""The comparison the toy model predicts, on the probe's measures.

In the toy model a query spanning two fields splits its attention between them, while a query
inside one field stays there. The probe's analogue: does the last prompt token split its attention
between the two named concepts more evenly after a cross-field prompt than after a single-field
prompt of the same topic? Per layer, each topic gives one paired difference: the cross prompt's
split index minus the mean of its single_a and single_b prompts'. The differences are tested
against zero over topics (Wilcoxon signed-rank by default, or a paired t-test), with Holm's
adjustment across layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from harness.analysis.statistics.holm import holm_adjust
from harness.defaults import EMBEDDED_MODEL_NAME
from harness.errors import HarnessError
from harness.geometry.probe import LAYER_MEAN, using
from harness.models.embedded import resolve
from harness.study.store import Study
from harness.study.tables.geometry import probed_models, split_frame

if TYPE_CHECKING:
    import pandas as pd

TESTS = ("wilcoxon", "t")


@dataclass
class ProbeComparison:
    model: str
    test: str
    alpha: float
    n_topics: int
    table: pd.DataFrame  # one row per layer

    def summary(self) -> str:
        t = self.table
        lines = [
            f"Split of attention between the two named concepts, {self.model}, last prompt token "
            f"(1 = even); {self.n_topics} topics, paired {self.test} test per layer, Holm-adjusted",
            f"{'layer':>5} {'topics':>6} {'cross':>7} {'single':>7} {'diff':>8} "
            f"{'p':>8} {'p_holm':>8}",
        ]
        for r in t.itertuples():
            lines.append(
                f"{r.layer:>5} {r.n_topics:>6} {r.split_cross:7.3f} "
                f"{r.split_single:7.3f} {r.diff:+8.3f} {r.p:8.3g} {r.p_holm:8.3g}"
            )
        lines.append(self.verdict())
        return "\n".join(lines)

    def verdict(self) -> str:
        t = self.table
        significant = t["p_holm"] < self.alpha
        more = int((significant & (t["diff"] > 0)).sum())
        less = int((significant & (t["diff"] < 0)).sum())
        return (
            f"Toy-model prediction (cross splits more evenly): cross > single in {more} of "
            f"{len(t)} layers and cross < single in {less} (Holm p < {self.alpha}); "
            f"cross higher in {int((t['diff'] > 0).sum())} layers, mean difference "
            f"{t['diff'].mean():+.4f}."
        )


def compare_split(
    study: Study | str | Path,
    model: str | None = None,
    *,
    test: str = "wilcoxon",
    alpha: float = 0.05,
) -> ProbeComparison:
    """Per layer: mean split index of cross vs single prompts and a paired test over topics."""
    if test not in TESTS:
        raise HarnessError(f"unknown test {test!r} (choose {', '.join(TESTS)})", column="test")
    with using(study) as opened:
        model = _stored_model(opened, model)
        paired = _paired(opened, model)
    # groupby types its keys as any scalar; "layer" holds integers
    rows = [_layer_row(cast(int, layer), group, test) for layer, group in paired.groupby("layer")]
    import pandas as pd

    table = pd.DataFrame(rows)
    table["p_holm"] = holm_adjust(table["p"].to_numpy())
    return ProbeComparison(model, test, alpha, int(paired["topic_id"].nunique()), table)


def _paired(study: Study, model: str) -> pd.DataFrame:
    """One row per (layer, topic): split index of cross and mean of the single conditions."""
    frame = split_frame(study, model, LAYER_MEAN)
    wide = frame.pivot_table(
        index=["layer", "topic_id"], columns="condition", values="split_index", aggfunc="mean"
    )
    singles = [c for c in ("single_a", "single_b") if c in wide]
    if "cross" not in wide or not singles:
        raise HarnessError(
            f"the probe has not measured both cross and single-field prompts "
            f"for {model} (run `harness geometry probe` first)",
            file=study.path,
        )
    out = wide.assign(single=wide[singles].mean(axis=1))[["cross", "single"]].dropna()
    if out.empty:
        raise HarnessError(
            f"no topic has both a cross and a single-field measure for {model}", file=study.path
        )
    return out.reset_index()


def _layer_row(layer: int, group: pd.DataFrame, test: str) -> dict[str, Any]:
    diff = (group["cross"] - group["single"]).to_numpy()
    return {
        "layer": int(layer),
        "n_topics": len(diff),
        "split_cross": group["cross"].mean(),
        "split_single": group["single"].mean(),
        "diff": diff.mean(),
        "p": paired_p(diff, test),
    }


def paired_p(diff: np.ndarray, test: str = "wilcoxon") -> float:
    """Two-sided p of paired differences against zero; NaN when there is nothing to test."""
    from scipy import stats

    if len(diff) < 2 or not np.any(diff != 0):
        return float("nan")
    if test == "t":
        return float(stats.ttest_1samp(diff, 0.0).pvalue)
    return float(stats.wilcoxon(diff).pvalue)


def _stored_model(study: Study, model: str | None) -> str:
    """The model label the probe stored: given, or the only one present, or the embedded one."""
    stored = probed_models(study)
    if model is None:
        if len(stored) == 1:
            result: str = stored[0]
            return result

        return EMBEDDED_MODEL_NAME
    if model in stored:
        return model

    try:
        return resolve(model)[0]  # a model path given the way the probe was given it
    except HarnessError:
        return model
