"""The explorer's data: compact row tables read from the store, blinded or unblinded.

Before unblinding the page gets only what a reviewer could see (items, reviewers, reviews,
searches with their hits), keyed by the random item ids and ordered by them. After `analyze` has
unblinded the study it also gets topics, prompts and outputs, and each item's output. Rows are
lists (not objects) so that a 10,000-topic study stays a few tens of megabytes; the column names
travel with each table.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from harness.study.store import Study
from harness.study.unblinding import unblinded_at

Table = dict[str, Any]  # {"columns": [...], "rows": [[...], ...]}

BLIND_SQL = {
    "items": "SELECT item_id, display_text, core_combination FROM items ORDER BY item_id",
    "reviewers": "SELECT reviewer_id, kind, method FROM reviewers ORDER BY reviewer_id",
    "reviews": "SELECT item_id, reviewer_id, verdict, confidence, prior_work, notes, created_at "
               "FROM reviews ORDER BY item_id, reviewer_id",
    "searches": "SELECT item_id, reviewer_id, database, query, run_at, total_hits, filters, hits, "
                "relevant_ids FROM searches WHERE item_id IS NOT NULL "
                "ORDER BY item_id, reviewer_id, run_at, search_id",
}

OPEN_SQL = {
    "topics": "SELECT topic_id, field_a, field_b, domain_a, domain_b, concepts_a, concepts_b, "
              "relation FROM topics ORDER BY topic_id",
    "prompts": "SELECT prompt_id, topic_id, condition, family, text FROM prompts "
               "ORDER BY topic_id, CASE condition WHEN 'single_a' THEN 0 WHEN 'single_b' THEN 1 "
               "ELSE 2 END",
    "outputs": "SELECT output_id, prompt_id, sample, model, status, text, finish_reason, error "
               "FROM outputs ORDER BY prompt_id, model, sample",
    "item_outputs": "SELECT item_id, output_id FROM items",
}

HIT_COLUMNS = ["rank", "id", "doi", "title", "year", "relevant"]


def page_data(study: Study) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready tables; blinded unless the study is unblinded."""
    when = unblinded_at(study)
    conn = study.conn
    items = _rows(conn, BLIND_SQL["items"])
    item_index = {row[0]: n for n, row in enumerate(items)}
    reviewers = _rows(conn, BLIND_SQL["reviewers"])
    reviewer_index = {row[0]: n for n, row in enumerate(reviewers)}
    data: dict[str, Any] = {
        "study_id": study.study_id, "unblinded_at": when,
        "items": _table(["item_id", "display_text", "core_combination"], items),
        "reviewers": _table(["reviewer_id", "kind", "method"], reviewers),
        "reviews": _table(
            ["item", "reviewer", "verdict", "confidence", "prior_work", "notes", "created_at"],
            [[item_index[r[0]], reviewer_index.get(r[1], -1), *r[2:]]
             for r in _rows(conn, BLIND_SQL["reviews"])]),
        "searches": _table(
            ["item", "reviewer", "database", "query", "run_at", "total_hits", "filters", "hits"],
            [[item_index.get(s[0], -1), reviewer_index.get(s[1], -1), *s[2:7],
              _hits(s[7], s[8])] for s in _rows(conn, BLIND_SQL["searches"])]),
        "hit_columns": HIT_COLUMNS,
    }
    if when is not None:
        data.update(_unblinded(conn, item_index))
    return data


def _unblinded(conn: sqlite3.Connection, item_index: dict[str, int]) -> dict[str, Any]:
    """Topics, prompts and outputs, and the output of each item (-1: no output, e.g. control)."""
    topics = _rows(conn, OPEN_SQL["topics"])
    topic_index = {row[0]: n for n, row in enumerate(topics)}
    prompts = _rows(conn, OPEN_SQL["prompts"])
    prompt_index = {row[0]: n for n, row in enumerate(prompts)}
    outputs = _rows(conn, OPEN_SQL["outputs"])
    output_index = {row[0]: n for n, row in enumerate(outputs)}
    item_output = [-1] * len(item_index)
    for item_id, output_id in _rows(conn, OPEN_SQL["item_outputs"]):
        item_output[item_index[item_id]] = output_index.get(output_id, -1)
    return {
        "topics": _table(
            ["topic_id", "field_a", "field_b", "domain_a", "domain_b", "concepts_a",
             "concepts_b", "relation"],
            [[*t[:5], _json_list(t[5]), _json_list(t[6]), t[7]] for t in topics]),
        "prompts": _table(["prompt_id", "topic", "condition", "family", "text"],
                          [[p[0], topic_index.get(p[1], -1), *p[2:]] for p in prompts]),
        "outputs": _table(
            ["output_id", "prompt", "sample", "model", "status", "text", "finish_reason",
             "error"],
            [[o[0], prompt_index.get(o[1], -1), *o[2:]] for o in outputs]),
        "item_output": item_output,
    }


def _rows(conn: sqlite3.Connection, sql: str) -> list[list[Any]]:
    return [list(row) for row in conn.execute(sql)]


def _table(columns: list[str], rows: list[list[Any]]) -> Table:
    return {"columns": columns, "rows": rows}


def _json_list(text: str | None) -> list[Any]:
    try:
        value = json.loads(text or "[]")
    except json.JSONDecodeError:
        return [text]
    return value if isinstance(value, list) else [value]


def _hits(hits: str | None, relevant_ids: str | None) -> list[list[Any]]:
    """Each retrieved work as [rank, id, doi, title, year, relevant]."""
    relevant = {str(r) for r in _json_list(relevant_ids)}
    out = []
    for n, hit in enumerate(_json_list(hits)):
        if isinstance(hit, dict):
            hit_id = str(hit.get("id", ""))
            out.append([hit.get("rank", n + 1), hit_id, hit.get("doi"), hit.get("title", ""),
                        hit.get("year"), hit_id in relevant])
    return out
