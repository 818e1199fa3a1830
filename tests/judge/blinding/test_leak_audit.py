from __future__ import annotations

import random

import numpy as np
import pytest
from openpyxl import load_workbook
from sklearn.metrics import roc_auc_score

from harness.judge.blinding import leak_audit
from harness.judge.blinding.leak_audit import (
    auc,
    classifier_audit,
    cluster_bootstrap_ci,
    scan_packets,
)
from harness.judge.items.blinded_items import create_items
from harness.study.store import Study
from tests.judge.conftest import MODEL, output_text


def test_auc_matches_sklearn() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    scores = rng.normal(size=300) + y * 0.8
    scores[:20] = 0.0  # ties count half
    assert abs(auc(y, scores) - roc_auc_score(y, scores)) < 1e-12


def test_bootstrap_interval_covers_the_estimate() -> None:
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(60), 3)
    y = np.tile([0, 0, 1], 60)
    scores = rng.normal(size=180) + y
    low, high = cluster_bootstrap_ci(y, scores, groups, 500, 0)
    assert low < auc(y, scores) < high and low > 0.5


def _resample_by_resample(y, scores, groups, n_boot: int, seed: int) -> tuple[float, float]:
    """The interval by its definition: each resample's items gathered and ranked (`auc`)."""
    rng = np.random.default_rng(seed)
    topics = np.unique(groups)
    members = [np.flatnonzero(groups == t) for t in topics]
    values = []
    for _ in range(n_boot):
        pick = np.concatenate([members[i] for i in rng.integers(0, len(topics), len(topics))])
        if 0 < y[pick].sum() < len(pick):
            values.append(auc(y[pick], scores[pick]))
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


@pytest.mark.parametrize("cells", [leak_audit._BOOTSTRAP_CELLS, 50])  # 50: many small chunks
def test_bootstrap_is_its_definition_to_the_bit(monkeypatch, cells: int) -> None:
    monkeypatch.setattr(leak_audit, "_BOOTSTRAP_CELLS", cells)
    rng = np.random.default_rng(2)
    for case in range(12):
        groups = rng.integers(0, int(rng.integers(2, 30)), int(rng.integers(4, 120)))
        y = (rng.uniform(size=len(groups)) < 0.4).astype(int)
        y[:2] = [0, 1]
        scores = rng.normal(size=len(groups)) + y
        if case % 2:  # ties within and across the classes
            scores = np.round(scores)
        expected = _resample_by_resample(y, scores, groups, 200, case)
        assert cluster_bootstrap_ci(y, scores, groups, 200, case) == expected


def giveaway(rng: random.Random, topic: int, condition: str) -> str:
    base = output_text(rng, topic, condition)
    return base + (" This bridges two distant disciplines." if condition == "cross" else "")


def test_classifier_detects_a_giveaway(make_study) -> None:
    study = make_study(n_topics=30, text=giveaway)
    create_items(study)
    audit = classifier_audit(study, n_boot=300)
    assert audit.auc > 0.95 and audit.ci_low > 0.8
    assert audit.n_items == 90 and audit.n_cross == 30 and audit.n_topics == 30
    assert "above chance" in audit.summary()


def test_classifier_near_chance_without_signal(make_study) -> None:
    study = make_study(n_topics=30)
    create_items(study)
    audit = classifier_audit(study, n_boot=300)
    assert audit.ci_low < 0.5 < audit.ci_high
    assert "no better than chance" in audit.summary()


def test_texts_without_words_are_scored_at_chance(make_study) -> None:
    """Outputs of emoji and control characters give TF-IDF no vocabulary: chance, no crash."""
    study = make_study(n_topics=4, text=lambda rng, t, c: "\U0001f600 \x07 " * (t + 1))
    create_items(study)
    audit = classifier_audit(study, n_boot=50)
    assert audit.auc == 0.5 and audit.n_items == 12


def test_classifier_needs_enough_items(make_study) -> None:
    study = make_study(n_topics=1)
    create_items(study)
    audit = classifier_audit(study)
    assert audit.auc is None and "not run" in audit.summary()


def test_clean_packets_scan_clean(blinded: Study) -> None:
    assert scan_packets(blinded) == []


def test_scan_finds_planted_leaks(blinded: Study) -> None:
    path = blinded.packets_dir / "ann" / "ann.xlsx"
    wb = load_workbook(path)
    prompt = blinded.rows("SELECT text FROM prompts LIMIT 1")[0][0]
    wb["Instructions"].cell(1, 1).value = "topic-003 is about this"
    wb["Instructions"].cell(2, 1).value = "the cross condition"
    wb["Meta"].cell(1, 2).value = f"made with {MODEL}"
    wb["Items"].cell(2, 2).value = f"The model said: {prompt}"  # an echo inside item text
    wb["Items"].cell(3, 2).value = "a cross-shaped lattice"  # ordinary English in item text
    wb.save(path)
    (blinded.packets_dir / "ann" / "instructions.md").write_text("notes on single_b\n")
    findings = scan_packets(blinded)
    kinds = {(f.kind, f.in_item_text) for f in findings}
    assert ("topic id", False) in kinds
    assert ("condition name", False) in kinds
    assert ("model name", False) in kinds
    assert ("prompt text", True) in kinds
    assert not any(f.value.lower() == "cross" and f.in_item_text for f in findings)
    assert any(f.file == "ann/instructions.md" and f.value == "single_b" for f in findings)
