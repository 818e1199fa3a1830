"""Leak audit for several models: how well a classifier tells each model's outputs from the others'
in what reviewers see. Packets never name a model (the packet scan checks names); this measures
whether the style of a model gives it away, next to the condition AUC. Keys that are
configurations of one model (`local#sampled`, `local#greedy`) are spoken of as such."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.judge.blinding.leak_audit import auc, cluster_bootstrap_ci, out_of_fold, text_scorer
from harness.judge.judge_defaults import LEAK_BOOTSTRAP, LEAK_FOLDS
from harness.models.configurations import Wording, wording
from harness.study.records import JsonObject
from harness.study.store import Study
from harness.study.tables.judge_reads import model_audit_frame

__all__ = ["ModelAudit", "model_audit"]


@dataclass
class ModelAudit:
    """One-vs-rest AUC per model (one AUC for two models), each with a topic-cluster interval."""

    models: list[str]
    auc: list[float | None] = field(default_factory=list)
    ci_low: list[float | None] = field(default_factory=list)
    ci_high: list[float | None] = field(default_factory=list)
    n_items: int = 0
    folds: int = 0
    method: str = (
        "TF-IDF (words, 1-2 grams) + logistic regression, one model (or configuration) against the "
        "others, out-of-fold scores with topics kept whole, topic-cluster bootstrap CI"
    )
    note: str = ""

    @property
    def words(self) -> Wording:
        return wording(self.models)

    def summary(self) -> str:
        words = self.words
        if not self.auc:
            return f"Leak audit ({words.nouns}): not run ({self.note})"
        parts = [
            f"{name} {a:.3f} (95% CI {lo:.3f} to {hi:.3f})"
            for name, a, lo, hi in zip(
                self._labels(), self.auc, self.ci_low, self.ci_high, strict=True
            )
            if a is not None and lo is not None and hi is not None
        ]
        of = f" of {words.of_model}" if words.of_model else ""
        return (
            f"Leak audit ({words.nouns}{of}): AUC of telling a {words.noun}'s items from the "
            "others' " + "; ".join(parts) + f" ({self.n_items} items, {self.folds} folds)."
        )

    def _labels(self) -> list[str]:
        return [f"{self.models[1]} vs {self.models[0]}"] if len(self.models) == 2 else self.models

    def as_dict(self) -> JsonObject:
        return {
            "models": [*self.models],
            "kind": self.words.kind,  # "configurations": settings of one model (of_model)
            "of_model": self.words.of_model,
            "labels": [*self._labels()],
            "auc": [*self.auc],
            "ci_low": [*self.ci_low],
            "ci_high": [*self.ci_high],
            "n_items": self.n_items,
            "folds": self.folds,
            "method": self.method,
            "note": self.note,
        }


def model_audit(
    study: Study, *, folds: int = LEAK_FOLDS, n_boot: int = LEAK_BOOTSTRAP, seed: int = 0
) -> ModelAudit | None:
    """None when the study's items come from one model."""
    frame = model_audit_frame(study)
    models = sorted(str(m) for m in frame.model.unique())
    if len(models) < 2:
        return None
    groups = frame.topic_id.to_numpy()
    out = ModelAudit(models, n_items=len(frame), folds=min(folds, len(set(groups))))
    if out.folds < 2:
        out.note = "needs at least 2 topics"
        return out
    texts = (frame.display_text + "\n" + frame.core).tolist()
    for name in models[1:] if len(models) == 2 else models:
        y = (frame.model == name).to_numpy(int)
        scores = out_of_fold(texts, y, groups, out.folds, seed, text_scorer(texts, y))
        low, high = cluster_bootstrap_ci(y, scores, groups, n_boot, seed)
        out.auc.append(auc(y, scores))
        out.ci_low.append(low)
        out.ci_high.append(high)
    return out
