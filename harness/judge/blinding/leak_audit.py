"""Leak audit: how guessable is the condition from what reviewers see, and do packets hold secrets?

Two checks. (1) A classifier (TF-IDF + logistic regression), cross-validated with topics kept
whole within folds, predicts `cross` versus single-field from the displayed text and core
combination; its AUC comes with a topic-cluster bootstrap 95% interval. Cross-field outputs
differ in content by design, so an AUC above 0.5 is expected; the number tells users how much a
reviewer could guess. (2) A scan of every packet file for topic ids, prompt texts, condition
names and model names: outside item texts any hit is an error; inside an item text (the model
echoing its prompt, say) it is reported as a warning with the item.
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import TYPE_CHECKING

from harness.judge.judge_defaults import LEAK_BOOTSTRAP, LEAK_FOLDS
from harness.judge.packets import packet_format as F
from harness.study.records import JsonObject
from harness.study.store import Study
from harness.study.tables.assignments import control_positions
from harness.study.tables.controls import control_ids
from harness.study.tables.items import control_item_ids, display_texts, recorded_steps
from harness.study.tables.judge_reads import (
    condition_audit_frame,
    control_audit_frame,
    output_model_names,
    prompt_messages,
    topic_ids,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from harness.judge.blinding.leak_models import ModelAudit

FEW_TOPICS = 10


@dataclass
class LeakAudit:
    """Cross-validated AUC of predicting `cross` from what reviewers see, with a 95% interval."""

    auc: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_cross: int
    n_topics: int
    folds: int
    method: str
    note: str = ""
    controls: ControlAudit | None = None
    models: ModelAudit | None = None  # with several models

    def summary(self) -> str:
        extra = "" if self.controls is None else "\n" + self.controls.summary()
        extra += "" if self.models is None else "\n" + self.models.summary()
        return self._summary() + extra

    def _summary(self) -> str:
        if self.auc is None:
            return f"Leak audit (classifier): not run ({self.note})"
        guess = (
            "no better than chance"
            if self.ci_low is not None and self.ci_low <= 0.5
            else "above chance"
        )
        caveat = " (few topics: the interval is rough)" if self.n_topics < FEW_TOPICS else ""
        return (
            f"Leak audit: {self.method}; AUC {self.auc:.3f} "
            f"(95% CI {self.ci_low:.3f} to {self.ci_high:.3f}{caveat}; {self.n_items} items, "
            f"{self.n_topics} topics, {self.folds} folds): the condition is {guess} to guess "
            "from what reviewers see."
        )

    def as_dict(self) -> JsonObject:
        out = {
            k: getattr(self, k)
            for k in (
                "auc",
                "ci_low",
                "ci_high",
                "n_items",
                "n_cross",
                "n_topics",
                "folds",
                "method",
                "note",
            )
        }
        if self.controls is not None:
            out["controls"] = self.controls.as_dict()
        if self.models is not None:
            out["models"] = self.models.as_dict()
        return out


def classifier_audit(
    study: Study, *, folds: int = LEAK_FOLDS, n_boot: int = LEAK_BOOTSTRAP, seed: int = 0
) -> LeakAudit:
    frame = condition_audit_frame(study)
    y = (frame.condition == "cross").to_numpy(int)
    groups = frame.topic_id.to_numpy()
    n_topics = len(set(groups))
    n_folds = min(folds, n_topics)
    method = (
        "TF-IDF (words, 1-2 grams) + logistic regression, out-of-fold scores with topics "
        "kept whole, topic-cluster bootstrap CI"
    )
    base = LeakAudit(None, None, None, len(frame), int(y.sum()), n_topics, n_folds, method)
    if n_folds < 2 or y.sum() < 2 or (1 - y).sum() < 2:
        base.note = "needs at least 2 topics and 2 items of each class"
        return base
    texts = (frame.display_text + "\n" + frame.core).tolist()

    scores = out_of_fold(texts, y, groups, n_folds, seed, text_scorer(texts, y))
    base.auc = auc(y, scores)
    base.ci_low, base.ci_high = cluster_bootstrap_ci(y, scores, groups, n_boot, seed)
    return base


def text_scorer(texts: list[str], y: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """TF-IDF + logistic regression fitted on `train`, scoring `test` (for `out_of_fold`)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    def fit_score(train: np.ndarray, test: np.ndarray) -> np.ndarray:
        import numpy as np

        model = make_pipeline(
            TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1),
            LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced"),
        )
        try:
            model.fit([texts[i] for i in train], y[train])
        except ValueError as error:  # texts without a single word (emoji, symbols, controls)
            if "empty vocabulary" not in str(error):
                raise
            return np.zeros(len(test))  # nothing to learn from: the chance score
        result: np.ndarray = model.decision_function([texts[i] for i in test])
        return result

    return fit_score


def out_of_fold(
    texts: list[str],
    y: np.ndarray,
    groups: np.ndarray,
    n_folds: int,
    seed: int,
    fit_score: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Scores of every item from a model fitted without its group (folds keep groups whole)."""
    import numpy as np
    from sklearn.model_selection import StratifiedGroupKFold

    scores = np.zeros(len(texts))
    splitter = StratifiedGroupKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        # a pilot's few items leave a class with fewer members than folds; sklearn warns
        # ("least populated class"), but the folds are still valid and a fold without both
        # classes is skipped below, and the report says the interval is rough
        warnings.filterwarnings("ignore", "The least populated class", UserWarning)
        folds = list(splitter.split(texts, y, groups))
    for train, test in folds:
        if len(set(y[train])) >= 2:  # a fold with one class cannot be fitted; its scores stay 0
            scores[test] = fit_score(train, test)
    return scores


def auc(y: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve by the rank-sum formula (ties count half)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


#: resampled item copies held at once by `cluster_bootstrap_ci` (memory, not results)
_BOOTSTRAP_CELLS = 4_000_000


def cluster_bootstrap_ci(
    y: np.ndarray, scores: np.ndarray, groups: np.ndarray, n_boot: int, seed: int
) -> tuple[float, float]:
    """Percentile 95% interval, resampling whole topics (items of a topic are not independent).
    Resamples in which both classes appear count; each is drawn as it always was (one draw of
    the topics per resample), and its AUC is `resampled_aucs`' (the same value as `auc`)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    topics, topic_of = np.unique(groups, return_inverse=True)
    rows = max(1, _BOOTSTRAP_CELLS // max(1, len(y)))
    values = []
    for start in range(0, n_boot, rows):
        drawn = [
            np.bincount(rng.integers(0, len(topics), len(topics)), minlength=len(topics))
            for _ in range(min(rows, n_boot - start))
        ]
        values.append(resampled_aucs(y, scores, np.array(drawn)[:, topic_of]))
    low, high = np.percentile(np.concatenate(values), [2.5, 97.5])
    return float(low), float(high)


def resampled_aucs(y: np.ndarray, scores: np.ndarray, copies: np.ndarray) -> np.ndarray:
    """AUC of each resample in which both classes appear (`copies`: one row per resample, the
    times each item is in it), by the Mann-Whitney count on the scores' distinct values: per
    positive copy, the negative copies below it plus half those tied with it. That count is
    the rank-sum formula's numerator to the bit (whole and half numbers, exact in floating
    point), without ranking every resample."""
    import numpy as np

    at = np.unique(scores, return_inverse=True)[1]
    width = int(at.max()) + 1 if len(at) else 0
    cells = (np.arange(len(copies))[:, None] * width + at[None, :]).ravel()

    def by_value(weights: np.ndarray) -> np.ndarray:
        counted = np.bincount(cells, weights.ravel(), minlength=len(copies) * width)
        result: np.ndarray = counted.reshape(len(copies), width)
        return result

    positive, negative = by_value(copies * (y == 1)), by_value(copies * (y != 1))
    below = np.cumsum(negative, axis=1) - negative
    wins = (positive * (below + 0.5 * negative)).sum(axis=1)
    n_pos, n_neg = positive.sum(axis=1), negative.sum(axis=1)
    both = (n_pos > 0) & (n_neg > 0)
    result: np.ndarray = wins[both] / (n_pos[both] * n_neg[both])
    return result


# -- controls: can they be told from real items? -------------------------------------------------
@dataclass
class ControlAudit:
    """Cross-validated AUC of telling control items from real ones, with a 95% interval."""

    auc: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_controls: int
    folds: int
    method: str
    note: str = ""

    def summary(self) -> str:
        if self.auc is None:
            return f"Leak audit (controls): not run ({self.note})"
        tell = (
            "no better than chance"
            if self.ci_low is not None and self.ci_low <= 0.5
            else "ABOVE CHANCE: reviewers could learn which items are controls"
        )
        return (
            f"Leak audit (controls): AUC {self.auc:.3f} (95% CI {self.ci_low:.3f} to "
            f"{self.ci_high:.3f}; {self.n_controls} control and "
            f"{self.n_items - self.n_controls} real items, {self.folds} folds): controls are "
            f"{tell} to tell from real items."
        )

    def as_dict(self) -> JsonObject:
        return {
            k: getattr(self, k)
            for k in (
                "auc",
                "ci_low",
                "ci_high",
                "n_items",
                "n_controls",
                "folds",
                "method",
                "note",
            )
        }


def control_audit(
    study: Study, *, folds: int = LEAK_FOLDS, n_boot: int = LEAK_BOOTSTRAP, seed: int = 0
) -> ControlAudit | None:
    """None without controls. Features: TF-IDF of text and core combination plus their lengths
    (characters, words, sentences), so a length band would show too."""

    frame = control_audit_frame(study)
    y = frame.is_control.to_numpy(int)
    if not y.sum():
        return None
    groups = frame.grp.to_numpy()
    n_folds = min(folds, int(y.sum()), int((1 - y).sum()), len(set(groups)))
    method = (
        "TF-IDF (words, 1-2 grams) and text lengths + logistic regression, out-of-fold "
        "scores with topics kept whole, topic-cluster bootstrap CI"
    )
    base = ControlAudit(None, None, None, len(frame), int(y.sum()), n_folds, method)
    if n_folds < 2:
        base.note = "needs at least 2 control and 2 real items"
        return base
    texts = (frame.display_text + "\n" + frame.core).tolist()
    scores = out_of_fold(
        texts,
        y,
        groups,
        n_folds,
        seed,
        lambda train, test: _fit_score(texts, frame, y, train, test),
    )
    base.auc = auc(y, scores)
    base.ci_low, base.ci_high = cluster_bootstrap_ci(y, scores, groups, n_boot, seed)
    return base


def _lengths(frame: pd.DataFrame) -> np.ndarray:
    import numpy as np

    def measures(text: str) -> list[float]:
        import numpy as np

        return [
            np.log1p(len(text)),
            np.log1p(len(text.split())),
            float(len(re.findall(r"[.!?](?:\s|$)", text))),
        ]

    return np.array(
        [measures(t) + measures(c) for t, c in zip(frame.display_text, frame.core, strict=True)]
    )


def _fit_score(
    texts: list[str], frame: pd.DataFrame, y: np.ndarray, train: np.ndarray, test: np.ndarray
) -> np.ndarray:
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1)
    lengths = _lengths(frame)
    mean, sd = lengths[train].mean(0), lengths[train].std(0) + 1e-9
    scaled = csr_matrix((lengths - mean) / sd)
    x_train = hstack([vectorizer.fit_transform([texts[i] for i in train]), scaled[train]])
    x_test = hstack([vectorizer.transform([texts[i] for i in test]), scaled[test]])
    model = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced")
    model.fit(x_train.tocsr(), y[train])
    result: np.ndarray = model.decision_function(x_test.tocsr())
    return result


ID_PATTERN = re.compile(r"I-[A-Z2-7]{10}")

#: A packet's controls all at its start or end is an error only where a random order would do
#: that less often than this (so a small packet is never refused by chance).
BLOCK_CHANCE = 1e-3


def control_findings(study: Study) -> list[Finding]:
    """Ways packets could set controls apart besides their words: ids not from the one
    generator (error), controls in one block at the start or end of a packet where a random
    order would do that with chance under BLOCK_CHANCE (error), and control texts outside the
    length band of real texts (warning)."""
    odd = [item_id for item_id in control_item_ids(study) if not ID_PATTERN.fullmatch(item_id)]
    findings = (
        [Finding("store", "control items", "item id pattern", f"{len(odd)} ids", False)]
        if odd
        else []
    )
    by_reviewer: dict[str, list[int]] = {}
    for place in control_positions(study):
        by_reviewer.setdefault(place.reviewer_id, []).append(int(place.is_control))
    for reviewer, flags in by_reviewer.items():
        n = sum(flags)
        if (
            0 < n < len(flags)
            and 2 / math.comb(len(flags), n) < BLOCK_CHANCE
            and (sum(flags[:n]) == n or sum(flags[-n:]) == n)
        ):
            findings.append(
                Finding(
                    reviewer, "item order", "controls in one block", f"{n} of {len(flags)}", False
                )
            )
    real = [len(text) for text in display_texts(study, "output")]
    if real:  # counted, not listed: naming the items would unblind whoever runs the study
        low, high = min(real), max(real)
        outside = sum(not low <= len(text) <= high for text in display_texts(study, "control"))
        if outside:
            findings.append(
                Finding(
                    "store",
                    "control items",
                    f"texts outside the length band of real items ({low}-{high} characters)",
                    f"{outside} items",
                    True,
                )
            )
    return findings


# -- scanning packets -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    """Something blinded found in a packet file."""

    file: str
    where: str
    kind: str  # 'topic id' | 'prompt text' | 'condition name' | 'model name' | 'sample ...'
    value: str
    in_item_text: bool

    def __str__(self) -> str:
        place = "item text" if self.in_item_text else "packet"
        return f"{self.file}: {self.where}: {self.kind} {self.value[:60]!r} in {place}"


class _Terms:
    """Compiled patterns for everything reviewers must not see."""

    def __init__(self, study: Study) -> None:
        ids = topic_ids(study)
        prompts = [
            t.strip() for pair in prompt_messages(study) for t in pair if t and len(t.strip()) >= 20
        ]
        models = set()
        for names in output_model_names(study):
            for name in (names.model, names.reported):
                if name:
                    models.update({name, Path(name).name})
        for steps in recorded_steps(study):
            models.update(Path(s["model"]).name for s in steps if s.get("model"))
        models = {m for m in models if len(m) >= 4}
        ids += control_ids(study)
        self.patterns = [
            ("topic id", _alternation(ids, word=True, flags=0)),
            (
                "prompt text",
                _alternation(sorted(set(prompts), key=len, reverse=True), word=False, flags=0),
            ),
            (
                "model name",
                _alternation(sorted(models, key=len, reverse=True), word=False, flags=re.I),
            ),
            ("condition name", re.compile(r"single_a|single_b", re.I)),
        ]
        self.cross = re.compile(r"(?<![A-Za-z0-9])cross(?![A-Za-z0-9])", re.I)
        # words that would tell a primary reviewer an item is in the gold sample; the bundled
        # judging texts use none of them (model text may, so item texts are not scanned)
        self.sample = re.compile(r"adjudicat|(?<![A-Za-z])(?:gold|sample[sd]?)(?![A-Za-z])", re.I)

    def find(self, text: str, in_item_text: bool) -> list[tuple[str, str]]:
        hits = [
            (kind, m.group(0))
            for kind, pattern in self.patterns
            if pattern is not None
            for m in [pattern.search(text)]
            if m
        ]
        if not in_item_text:  # "cross" is ordinary English inside model text
            m = self.cross.search(text)
            if m:
                hits.append(("condition name", m.group(0)))
            m = self.sample.search(text)
            if m:
                hits.append(("sample membership", m.group(0)))
        return hits


def _alternation(terms: list[str], *, word: bool, flags: int) -> re.Pattern[str] | None:
    if not terms:
        return None
    body = "|".join(re.escape(t) for t in terms)
    if word:
        body = rf"(?<![\w-])(?:{body})(?![\w-])"
    return re.compile(body, flags)


def scan_packets(study: Study, folder: Path | None = None) -> list[Finding]:
    """Every blinded term found in any file under `packets/`."""
    folder = folder or study.packets_dir
    terms = _Terms(study)
    findings: list[Finding] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = str(path.relative_to(folder))
        if path.suffix == ".xlsx":
            cells = _xlsx_cells(path)
        elif path.suffix == ".csv":
            cells = _csv_cells(path)
        else:
            cells = [
                (f"line {n}", line, False)
                for n, line in enumerate(
                    path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
                )
            ]
        for where, text, item_text in cells:
            for kind, value in terms.find(text, item_text):
                findings.append(Finding(rel, where, kind, value, item_text))
    return findings


def _xlsx_cells(path: Path) -> list[tuple[str, str, bool]]:
    """All cell texts of all sheets (hidden ones too), plus workbook-level parts."""
    from openpyxl import load_workbook

    text_columns = {c.title for c in F.ITEM_COLUMNS if c.key in ("text", "core_combination")}
    out = []
    wb = load_workbook(path, read_only=True)
    try:
        for ws in wb.worksheets:
            item_cols: set[int] = set()
            for r, row in enumerate(ws.iter_rows(values_only=True), start=1):
                if r == 1 and ws.title == F.ITEMS_SHEET:
                    item_cols = {i for i, v in enumerate(row) if v in text_columns}
                for c, value in enumerate(row):
                    if value is not None:
                        out.append(
                            (f"{ws.title}!R{r}C{c + 1}", str(value), r > 1 and c in item_cols)
                        )
    finally:
        wb.close()
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.startswith("docProps/") or name == "xl/workbook.xml":
                raw = archive.read(name).decode("utf-8", errors="replace")
                out.append((name, unescape(re.sub(r"<[^>]+>", " ", raw)), False))
    return out


def _csv_cells(path: Path) -> list[tuple[str, str, bool]]:
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    records = list(csv.reader(io.StringIO(text, newline="")))
    header = records[0] if records else []
    text_cols = {i for i, h in enumerate(header) if h in ("text", "core_combination")}
    return [
        (
            f"row {r} column {header[c] if c < len(header) else c + 1}",
            value,
            r > 1 and c in text_cols,
        )
        for r, record in enumerate(records, start=1)
        for c, value in enumerate(record)
        if value
    ]
