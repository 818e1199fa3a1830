"""What each export target reads from the store, blinded and unblinded.

Every item-keyed table is written as a blinded base query (only what a reviewer could see, keyed
by the random item and reviewer ids and ordered by them, never by insertion order, which follows
topics and conditions). After `analyze` has unblinded the study, the same rows are joined to their
output, prompt, topic and condition. The joins are LEFT JOINs so that items without an output
(control items with a known answer) are kept rather than dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

# Columns that reveal where an item came from; only ever added after unblinding.
REVEAL_COLUMNS = ("output_id", "prompt_id", "topic_id", "condition", "sample", "model")

_REVEAL_SELECT = "i.output_id, o.prompt_id, p.topic_id, p.condition, o.sample, o.model"
_REVEAL_JOIN = (
    "LEFT JOIN items i ON i.item_id = x.item_id "
    "LEFT JOIN outputs o ON o.output_id = i.output_id "
    "LEFT JOIN prompts p ON p.prompt_id = o.prompt_id"
)


@dataclass(frozen=True)
class Table:
    name: str
    base: str  # SELECT ... FROM ... (no ORDER BY); blinded when `blinded`
    order: str  # ORDER BY clause over the base's columns, as x.<column>
    blinded: bool  # True: item-keyed, gated on unblinding
    filled_by: str  # the command that fills the table, for the empty-table message
    reveal_extra: str = ""  # further item columns shown only after unblinding

    def sql(self, unblinded: bool) -> str:
        if not (self.blinded and unblinded):
            return f"SELECT x.* FROM ({self.base}) x ORDER BY {self.order}"
        extra = f", {self.reveal_extra}" if self.reveal_extra else ""
        return (
            f"SELECT x.*{extra}, {_REVEAL_SELECT} FROM ({self.base}) x {_REVEAL_JOIN} "
            f"ORDER BY {self.order}"
        )


_HIT = "json_extract(h.value, '$.{0}') AS {1}"

TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        Table(
            "prompts",
            "SELECT p.*, t.field_a, t.field_b, p.rowid AS _row FROM prompts p "
            "JOIN topics t USING (topic_id)",
            "x._row",
            False,
            "harness generate",
        ),
        Table(
            "outputs",
            "SELECT o.output_id, o.prompt_id, p.topic_id, p.condition, o.sample, o.status, "
            "o.backend, o.model, o.model_key, o.model_reported, o.system_fingerprint, o.params, "
            "o.text, o.finish_reason, o.prompt_tokens, o.completion_tokens, o.cost_usd, o.latency_s, "
            "o.attempts, o.error, o.started_at, o.finished_at, o.rowid AS _row "
            "FROM outputs o LEFT JOIN prompts p ON p.prompt_id = o.prompt_id",
            "x._row",
            False,
            "harness collect",
        ),
        Table(
            "items",
            "SELECT item_id, display_text, core_combination FROM items",
            "x.item_id",
            True,
            "harness judge --blind",
            reveal_extra="i.original_text, i.steps",
        ),
        Table(
            "assignments",
            "SELECT a.item_id, a.reviewer_id, v.kind AS reviewer_kind, a.position "
            "FROM assignments a LEFT JOIN reviewers v ON v.reviewer_id = a.reviewer_id",
            "x.reviewer_id, x.position, x.item_id",
            True,
            "harness judge --blind",
        ),
        Table(
            "reviews",
            "SELECT r.item_id, r.reviewer_id, v.kind AS reviewer_kind, r.verdict, r.confidence, "
            "r.prior_work, r.notes, r.source, r.import_id, r.source_sha256, r.created_at "
            "FROM reviews r LEFT JOIN reviewers v ON v.reviewer_id = r.reviewer_id",
            "x.item_id, x.reviewer_id",
            True,
            "harness judge (import or automated reviewers)",
        ),
        Table(
            "searches",
            "SELECT s.search_id, s.item_id, s.reviewer_id, s.database, s.interface, s.query, "
            "s.parameters, s.filters, s.run_at, s.total_hits, json_array_length(s.hits) AS "
            "retrieved_hits, s.relevant_ids, s.dedup_key, s.source, s.import_id FROM searches s",
            "x.item_id, x.reviewer_id, x.run_at, x.search_id",
            True,
            "harness judge (import or automated reviewers)",
        ),
        Table(
            "hits",
            "SELECT s.search_id, s.item_id, s.reviewer_id, s.database, "
            + ", ".join(
                _HIT.format(k, c)
                for k, c in (
                    ("rank", "rank"),
                    ("id", "hit_id"),
                    ("doi", "doi"),
                    ("title", "title"),
                    ("year", "year"),
                    ("score", "score"),
                )
            )
            + ", EXISTS (SELECT 1 FROM json_each(COALESCE(s.relevant_ids, '[]')) r "
            "WHERE r.value = json_extract(h.value, '$.id')) AS relevant "
            "FROM searches s, json_each(s.hits) h",
            "x.item_id, x.reviewer_id, x.search_id, x.rank",
            True,
            "harness judge (import or automated reviewers)",
        ),
        Table(
            "judgments",
            "SELECT r.item_id, r.reviewer_id, v.kind AS reviewer_kind, v.method AS "
            "reviewer_method, r.verdict, r.confidence, r.created_at "
            "FROM reviews r LEFT JOIN reviewers v ON v.reviewer_id = r.reviewer_id",
            "x.item_id, x.reviewer_id",
            True,
            "harness judge (import or automated reviewers)",
        ),
    )
}

#: Columns that only exist for the internal ordering and are dropped before writing.
INTERNAL_COLUMNS = ("_row",)
