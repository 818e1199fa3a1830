"""A small reviewed study with searches, hits, two models and hostile text, for exports and the
explorer. Rows are inserted as the stages would insert them."""

from __future__ import annotations

import json
from pathlib import Path

from harness.study.store import Study
from tests.analysis.helpers import build_study, random_judgments

REVIEWERS = {"alice": "human", "bot": "automated"}
#: Text that would run script or break the page if it were ever written as HTML or ended the
#: embedded JSON early.
HOSTILE = (
    '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    "\u2028\u2029<!-- &amp; "
)


def build_records_study(path: Path, topics: int = 4, seed: int = 3) -> Path:
    """Topics x 3 conditions x 1 sample, two reviewers, one search with two hits per review."""
    build_study(
        path,
        random_judgments(topics, p_cross=0.6, p_single=0.3, reviewers=list(REVIEWERS), seed=seed),
        reviewers=REVIEWERS,
    )
    with Study.open(path) as study, study.transaction() as conn:
        conn.execute(
            "UPDATE outputs SET model = 'model-b', model_key = 'openai/model-b' "
            "WHERE prompt_id LIKE '%/cross'"
        )
        conn.execute("UPDATE outputs SET text = 'output of ' || output_id || ' ' || ?", (HOSTILE,))
        conn.execute(
            "UPDATE items SET display_text = 'idea ' || item_id || ' ' || ?, "
            "original_text = 'original ' || item_id",
            (HOSTILE,),
        )
        conn.execute(
            "UPDATE reviews SET notes = ?, confidence = 3 WHERE reviewer_id = 'alice'", (HOSTILE,)
        )
        reviews = conn.execute(
            "SELECT item_id, reviewer_id FROM reviews ORDER BY item_id, reviewer_id"
        ).fetchall()
        for n, (item, reviewer) in enumerate(reviews):
            hits = [
                {
                    "id": f"W{n}-{k}",
                    "doi": f"10.1/{n}.{k}",
                    "title": f"Work {k} {HOSTILE}",
                    "year": 2000 + k,
                    "score": 1.5 - k,
                    "rank": k + 1,
                }
                for k in range(2)
            ]
            conn.execute(
                "INSERT INTO searches (search_id, item_id, reviewer_id, database, interface, "
                "query, parameters, filters, run_at, total_hits, hits, relevant_ids, dedup_key, "
                "source) VALUES (?, ?, ?, 'openalex', 'api', ?, '{}', '{\"cutoff\": \"2024\"}', "
                "'2026-01-02T00:00:00Z', 40, ?, ?, ?, 'automated')",
                (
                    f"S{n:04d}",
                    item,
                    reviewer,
                    f"query for {item}",
                    json.dumps(hits),
                    json.dumps([f"W{n}-0"]),
                    f"k{n}",
                ),
            )
    return path


def build_configurations_study(path: Path, topics: int = 4) -> Path:
    """The records study as two configurations of one model (`local#sampled` on even topics,
    `local#greedy` on odd ones), both of them SmolLM2-135M-Instruct, as the demo names them."""
    build_records_study(path, topics)
    with Study.open(path) as study, study.transaction() as conn:
        conn.execute("UPDATE outputs SET model = 'SmolLM2-135M-Instruct'")
        prompts = [r[0] for r in conn.execute("SELECT DISTINCT topic_id FROM prompts ORDER BY 1")]
        for n, topic in enumerate(prompts):
            conn.execute(
                "UPDATE outputs SET model_key = ? WHERE prompt_id IN "
                "(SELECT prompt_id FROM prompts WHERE topic_id = ?)",
                ("local#sampled" if n % 2 == 0 else "local#greedy", topic),
            )
    return path


def add_item_without_output(path: Path, item_id: str = "ctrl-0000") -> str:
    """A control item (a known answer, no model output), reviewed by alice."""
    with Study.open(path) as study, study.transaction() as conn:
        conn.execute(
            "INSERT INTO controls (control_id, statement, text, expected, kind, source, "
            "evidence) VALUES ('c-0', 'a combination', 'control text', 'published', "
            "'cross', 'bank', '{}')"
        )
        conn.execute(
            "INSERT INTO items (item_id, output_id, control_id, original_text, "
            "core_combination, display_text, steps) VALUES (?, NULL, 'c-0', "
            "'control text', NULL, 'control text', '{}')",
            (item_id,),
        )
        conn.execute(
            "INSERT INTO reviews (item_id, reviewer_id, verdict, source, created_at) "
            "VALUES (?, 'alice', 'published', 'xlsx', '2026-01-01T00:00:00Z')",
            (item_id,),
        )
    return item_id
