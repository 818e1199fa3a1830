"""Read-only queries across tables: counts, the analysis frames, the explorer's rows and the
export targets. Nothing here writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.study.store import Study

if TYPE_CHECKING:
    import pandas as pd


# -- counts ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StoreCounts:
    """Rows of each stage's tables."""

    topics: int
    prompts: int
    outputs: int
    outputs_ok: int
    items: int
    assignments: int
    reviews: int
    searches: int
    probed_prompts: int  # prompts with geometry measures, any model
    reviews_assigned: int  # reviews of an assignment (not calibration extras)
    control_items: int  # of `items`, those of a control (the others are real items)


def store_counts(study: Study) -> StoreCounts:
    row = study.rows(
        "SELECT (SELECT COUNT(*) FROM topics), (SELECT COUNT(*) FROM prompts), "
        "(SELECT COUNT(*) FROM outputs), (SELECT COUNT(*) FROM outputs WHERE status = 'ok'), "
        "(SELECT COUNT(*) FROM items), (SELECT COUNT(*) FROM assignments), "
        "(SELECT COUNT(*) FROM reviews), (SELECT COUNT(*) FROM searches), "
        "(SELECT COUNT(DISTINCT prompt_id) FROM geometry), "
        "(SELECT COUNT(*) FROM reviews r JOIN assignments a "
        "ON a.item_id = r.item_id AND a.reviewer_id = r.reviewer_id), "
        "(SELECT COUNT(*) FROM items WHERE control_id IS NOT NULL)"
    )[0]
    return StoreCounts(*(int(n) for n in row))


def reviewer_kinds(study: Study) -> dict[str, int]:
    """Reviewers on the roster per kind (human, automated)."""
    return {r[0]: r[1] for r in study.rows("SELECT kind, COUNT(*) FROM reviewers GROUP BY kind")}


# -- the analysis ------------------------------------------------------------------------------
def reviewer_frame(study: Study) -> pd.DataFrame:
    """reviewer_id, kind, method, role ('primary' or 'adjudicator') by reviewer id."""
    return study.frame("SELECT reviewer_id, kind, method, role FROM reviewers ORDER BY reviewer_id")


def unblinded_review_frame(study: Study) -> pd.DataFrame:
    """One row per review of a model output, joined to its output, prompt (topic, condition)
    and reviewer: this is the unblinding join, run only after the key is verified. Reviews
    stored after the unblinding are left out (they are reported apart, never analysed).
    `round`: the adjudication round of the review's assignment (1 without one)."""
    return study.frame(
        "SELECT r.item_id, r.reviewer_id, r.verdict, r.confidence, r.source, r.created_at, "
        "v.kind, v.method, o.output_id, o.sample, o.model_key AS model, p.prompt_id, "
        "p.topic_id, p.condition, COALESCE(a.round, 1) AS round FROM reviews r "
        "JOIN items i ON i.item_id = r.item_id "
        "JOIN outputs o ON o.output_id = i.output_id "
        "JOIN prompts p ON p.prompt_id = o.prompt_id "
        "JOIN reviewers v ON v.reviewer_id = r.reviewer_id "
        "LEFT JOIN assignments a ON a.item_id = r.item_id AND a.reviewer_id = r.reviewer_id "
        "WHERE r.after_unblinding = 0"
    )


def control_review_frame(study: Study) -> pd.DataFrame:
    """One row per review of a control item, with its expected verdict, kind and split (reviews
    stored after the unblinding left out)."""
    return study.frame(
        "SELECT r.item_id, i.control_id, r.reviewer_id, rv.kind AS reviewer_kind, r.verdict, "
        "c.expected, c.kind AS control_kind, c.split "
        "FROM reviews r JOIN items i ON i.item_id = r.item_id "
        "JOIN controls c ON c.control_id = i.control_id "
        "JOIN reviewers rv ON rv.reviewer_id = r.reviewer_id WHERE r.after_unblinding = 0"
    )


# -- the explorer (rows as lists, in the order the page relies on) ------------------------------
def _lists(study: Study, sql: str) -> list[list[Any]]:
    return [list(row) for row in study.conn.execute(sql)]


def explorer_items(study: Study) -> list[list[Any]]:
    """[item_id, display_text, core_combination] by item id."""
    return _lists(
        study, "SELECT item_id, display_text, core_combination FROM items ORDER BY item_id"
    )


def explorer_reviewers(study: Study) -> list[list[Any]]:
    """[reviewer_id, kind, method, role] by reviewer id."""
    return _lists(
        study, "SELECT reviewer_id, kind, method, role FROM reviewers ORDER BY reviewer_id"
    )


def explorer_reviews(study: Study) -> list[list[Any]]:
    """[item_id, reviewer_id, verdict, confidence, prior_work, notes], grouped by item."""
    return _lists(
        study,
        "SELECT item_id, reviewer_id, verdict, confidence, prior_work, notes "
        "FROM reviews ORDER BY item_id, reviewer_id",
    )


def explorer_searches(study: Study) -> list[list[Any]]:
    """[item_id, reviewer_id, database, query, run_at, total_hits, filters, hits, relevant_ids]
    of item searches, grouped by item; hits and relevant ids stay JSON text."""
    return _lists(
        study,
        "SELECT item_id, reviewer_id, database, query, run_at, total_hits, filters, "
        "hits, relevant_ids FROM searches WHERE item_id IS NOT NULL "
        "ORDER BY item_id, reviewer_id, run_at, search_id",
    )


def explorer_topics(study: Study) -> list[list[Any]]:
    """[topic_id, field_a, field_b, domain_a, domain_b, concepts_a, concepts_b, relation]."""
    return _lists(
        study,
        "SELECT topic_id, field_a, field_b, domain_a, domain_b, concepts_a, concepts_b, "
        "relation FROM topics ORDER BY topic_id",
    )


def explorer_prompts(study: Study) -> list[list[Any]]:
    """[prompt_id, topic_id, condition, family, text] by topic, then single_a, single_b, cross."""
    return _lists(
        study,
        "SELECT prompt_id, topic_id, condition, family, text FROM prompts ORDER BY "
        "topic_id, CASE condition WHEN 'single_a' THEN 0 WHEN 'single_b' THEN 1 ELSE 2 END",
    )


def explorer_outputs(study: Study) -> list[list[Any]]:
    """[output_id, prompt_id, sample, model, status, finish_reason, text, error, model_key]."""
    return _lists(
        study,
        "SELECT output_id, prompt_id, sample, model, status, finish_reason, text, error, "
        "model_key FROM outputs ORDER BY prompt_id, model_key, sample",
    )


def item_outputs(study: Study) -> list[tuple[str, str | None]]:
    """(item id, output id or None for a control item) of every item."""
    return [(r[0], r[1]) for r in study.conn.execute("SELECT item_id, output_id FROM items")]


# -- export targets ----------------------------------------------------------------------------
# Every item-keyed target is a blinded base query (only what a reviewer could see, keyed by the
# random item and reviewer ids and ordered by them, never by insertion order, which follows topics
# and conditions). After unblinding the same rows are joined to their output, prompt, topic and
# condition; LEFT JOINs keep items without an output (control items).

#: The configuration label of a model key (`local#greedy` -> `greedy`; NULL without one).
_LABEL = "CASE WHEN instr({0}, '#') > 0 THEN substr({0}, instr({0}, '#') + 1) END"
#: Columns that reveal where an item came from; only ever added after unblinding. `model_key`
#: is the study's key of the model or configuration (`local#greedy`), `configuration` its label;
#: a control item has no output, and its expected verdict instead.
REVEAL_COLUMNS = (
    "output_id",
    "prompt_id",
    "topic_id",
    "condition",
    "sample",
    "model",
    "model_key",
    "configuration",
    "control_id",
    "expected",
    "control_kind",
    "control_split",
)
_REVEAL_SELECT = (
    "i.output_id, o.prompt_id, p.topic_id, p.condition, o.sample, o.model, o.model_key, "
    + _LABEL.format("o.model_key")
    + " AS configuration, i.control_id, c.expected, c.kind AS control_kind, "
    "c.split AS control_split"
)
_REVEAL_JOIN = (
    "LEFT JOIN items i ON i.item_id = x.item_id "
    "LEFT JOIN outputs o ON o.output_id = i.output_id "
    "LEFT JOIN prompts p ON p.prompt_id = o.prompt_id "
    "LEFT JOIN controls c ON c.control_id = i.control_id"
)
#: Columns that exist only for the ordering; dropped from the frame.
_INTERNAL_COLUMNS = ("_row",)


@dataclass(frozen=True)
class ExportView:
    base: str  # SELECT ... FROM ... (no ORDER BY); blinded when `blinded`
    order: str  # ORDER BY clause over the base's columns, as x.<column>
    blinded: bool  # True: item-keyed, gated on unblinding
    reveal_extra: str = ""  # further item columns shown only after unblinding
    sealed: bool = False  # True: nothing of it exists for a reader until unblinding (controls)

    def sql(self, unblinded: bool) -> str:
        if self.sealed or not (self.blinded and unblinded):
            return f"SELECT x.* FROM ({self.base}) x ORDER BY {self.order}"
        extra = f", {self.reveal_extra}" if self.reveal_extra else ""
        return (
            f"SELECT x.*{extra}, {_REVEAL_SELECT} FROM ({self.base}) x {_REVEAL_JOIN} "
            f"ORDER BY {self.order}"
        )


_HIT = "json_extract(h.value, '$.{0}') AS {1}"
_HIT_COLUMNS = (
    ("rank", "rank"),
    ("id", "hit_id"),
    ("doi", "doi"),
    ("title", "title"),
    ("year", "year"),
    ("score", "score"),
)
_REVIEWS = "FROM reviews r LEFT JOIN reviewers v ON v.reviewer_id = r.reviewer_id"

EXPORT_VIEWS: dict[str, ExportView] = {
    "prompts": ExportView(
        "SELECT p.*, t.field_a, t.field_b, p.rowid AS _row FROM prompts p "
        "JOIN topics t USING (topic_id)",
        "x._row",
        False,
    ),
    "outputs": ExportView(
        "SELECT o.output_id, o.prompt_id, p.topic_id, p.condition, o.sample, o.status, "
        "o.backend, o.model, o.model_key, "
        + _LABEL.format("o.model_key")
        + " AS configuration, o.model_reported, o.system_fingerprint, o.params, "
        "o.text, o.finish_reason, o.prompt_tokens, o.completion_tokens, o.cost_usd, o.latency_s, "
        "o.attempts, o.error, o.started_at, o.finished_at, o.rowid AS _row "
        "FROM outputs o LEFT JOIN prompts p ON p.prompt_id = o.prompt_id",
        "x._row",
        False,
    ),
    "items": ExportView(
        "SELECT item_id, display_text, core_combination FROM items",
        "x.item_id",
        True,
        reveal_extra="i.original_text, i.steps",
    ),
    "assignments": ExportView(
        "SELECT a.item_id, a.reviewer_id, v.kind AS reviewer_kind, a.position "
        "FROM assignments a LEFT JOIN reviewers v ON v.reviewer_id = a.reviewer_id",
        "x.reviewer_id, x.position, x.item_id",
        True,
    ),
    "reviews": ExportView(
        "SELECT r.item_id, r.reviewer_id, v.kind AS reviewer_kind, r.verdict, r.confidence, "
        f"r.prior_work, r.notes, r.source, r.import_id, r.source_sha256, r.created_at {_REVIEWS}",
        "x.item_id, x.reviewer_id",
        True,
    ),
    "searches": ExportView(
        "SELECT s.search_id, s.item_id, s.reviewer_id, s.database, s.interface, s.query, "
        "s.parameters, s.filters, s.run_at, s.total_hits, json_array_length(s.hits) AS "
        "retrieved_hits, s.relevant_ids, s.dedup_key, s.source, s.import_id FROM searches s",
        "x.item_id, x.reviewer_id, x.run_at, x.search_id",
        True,
    ),
    "hits": ExportView(
        "SELECT s.search_id, s.item_id, s.reviewer_id, s.database, "
        + ", ".join(_HIT.format(k, c) for k, c in _HIT_COLUMNS)
        + ", EXISTS (SELECT 1 FROM json_each(COALESCE(s.relevant_ids, '[]')) r "
        "WHERE r.value = json_extract(h.value, '$.id')) AS relevant "
        "FROM searches s, json_each(s.hits) h",
        "x.item_id, x.reviewer_id, x.search_id, x.rank",
        True,
    ),
    "judgments": ExportView(
        "SELECT r.item_id, r.reviewer_id, v.kind AS reviewer_kind, v.method AS "
        f"reviewer_method, v.role AS reviewer_role, r.verdict, r.confidence, r.created_at, "
        f"r.after_unblinding {_REVIEWS}",
        "x.item_id, x.reviewer_id",
        True,
    ),
    # one row per judgment of a control item, and a row for a control no one has judged
    # (reviewer columns empty); sealed in the blinding key until unblinding
    "controls": ExportView(
        "SELECT c.control_id, i.item_id, c.expected, c.kind AS control_kind, c.split, "
        "c.source, c.writer_model, c.topic_id, c.statement, r.reviewer_id, v.kind AS reviewer_kind, "
        "v.method AS reviewer_method, v.role AS reviewer_role, r.verdict, r.confidence, "
        "CASE WHEN r.verdict IS NULL THEN NULL ELSE r.verdict = c.expected END AS correct, "
        "r.created_at, r.after_unblinding FROM controls c LEFT JOIN items i ON i.control_id = c.control_id "
        "LEFT JOIN reviews r ON r.item_id = i.item_id "
        "LEFT JOIN reviewers v ON v.reviewer_id = r.reviewer_id",
        "x.control_id, x.reviewer_id",
        True,
        sealed=True,
    ),
}


def export_frame(study: Study, name: str, *, unblinded: bool) -> pd.DataFrame:
    """One export target (a key of EXPORT_VIEWS), revealing item origins only when `unblinded`."""
    frame = study.frame(EXPORT_VIEWS[name].sql(unblinded))
    return frame.drop(columns=[c for c in _INTERNAL_COLUMNS if c in frame.columns])
