"""The explorer's data: a small core read at open, and long texts in chunks read on demand.

Before unblinding the page gets only what a reviewer could see (items, reviewers, reviews,
searches with their hits), keyed by the random item ids and ordered by them. After `analyze` has
unblinded the study it also gets topics, prompts and outputs, and each item's output.

The core (ids, verdicts, models by their key and configuration, conditions, a short preview of
each item) is parsed when the
page opens; filters run over it. Long texts (items, reviewers' notes, searches and hits, prompts,
outputs) go into chunks of CHUNK rows that the page decodes only when a row is shown or a text
search runs, so that a 10,000-topic study opens in about a second.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

from pydantic import JsonValue

from harness.study.records import JsonObject
from harness.study.store import Study
from harness.study.tables import views
from harness.study.unblinding import unblinded_at

CHUNK = 500  # rows of long text per chunk
PREVIEW = 140  # characters of an item's text shown in the list

#: One row of a table or of long text as the page gets it: store values (text, numbers, NULL)
#: and lists of them.
Row = list[JsonValue]
#: Per kind, the long-text rows to be chunked (`search`: one string per item).
Texts = dict[str, list[JsonValue]]


def page_data(study: Study) -> tuple[JsonObject, Texts]:
    """(core, texts): the core tables, and per kind the long-text rows to be chunked."""
    when = unblinded_at(study)
    items = views.explorer_items(study)
    item_index = {row[0]: n for n, row in enumerate(items)}
    reviewers = views.explorer_reviewers(study)
    reviewer_index = {row[0]: n for n, row in enumerate(reviewers)}
    reviews, review_texts = _reviews(study, item_index, reviewer_index)
    searches = _searches(study, item_index, reviewer_index)
    core: JsonObject = {
        "study_id": study.study_id,
        "unblinded_at": when,
        "chunk": CHUNK,
        "items": _table(["item_id", "preview"], [[r[0], (r[1] or "")[:PREVIEW]] for r in items]),
        "reviewers": _table(["reviewer_id", "kind", "method", "role"], reviewers),
        "reviews": _table(["item", "reviewer", "verdict", "confidence"], reviews),
    }
    item_texts: list[ItemTexts] = [
        (r[1], r[2], review_texts.get(n, []), searches.get(n, [])) for n, r in enumerate(items)
    ]
    texts: Texts = {"items": [[t[0], t[1], [*t[2]], [*t[3]]] for t in item_texts]}
    opened = None
    if when is not None:
        opened = _unblinded(study, item_index)
        core.update(opened.core)
        core["real_accuracy"] = _real_accuracy(study)
        texts.update(opened.texts)
    texts["search"] = [*_search_text([r[0] for r in items], item_texts, opened)]
    return core, texts


#: An item's long texts: display text, core combination, its reviews' [prior_work, notes], and
#: its searches (`_searches`).
ItemTexts = tuple[str | None, str | None, list[Row], list[Row]]


@dataclass
class _Unblinded:
    """What the page gets once the study is unblinded, with the rows the search text reads."""

    core: JsonObject
    texts: Texts
    item_output: list[int]  # per item, its output's row (-1: none)
    output_parts: list[list[object]]  # per output, what the search text takes from it
    prompt_of: list[int]  # per output, its prompt's row (-1: none)
    prompt_parts: list[list[object]]  # per prompt, what the search text takes from it


def _search_text(
    item_ids: list[str], item_texts: list[ItemTexts], opened: _Unblinded | None
) -> list[str]:
    """Per item, the lower-cased text a search box query is matched against: the item, its
    reviews' notes and queries, and (after unblinding) its output and prompt. Made here once so
    that the page's first search decodes strings instead of building them."""
    out = []
    for n, item_id in enumerate(item_ids):
        display, combination, notes, found = item_texts[n]
        parts: list[object] = [
            item_id,
            display,
            combination,
            *(x for pair in notes for x in pair),
            *(s[2] for s in found),
        ]
        if opened is not None and opened.item_output[n] >= 0:
            k = opened.item_output[n]
            parts += opened.output_parts[k]
            prompt = opened.prompt_of[k]
            if prompt >= 0:
                parts += opened.prompt_parts[prompt]
        out.append("\n".join(str(p) for p in parts if p is not None).lower())
    return out


def _reviews(
    study: Study, item_index: dict[str, int], reviewer_index: dict[str, int]
) -> tuple[list[Row], dict[int, list[Row]]]:
    """Core rows [item, reviewer, verdict, confidence]; per item, [prior_work, notes] in order."""
    core: list[Row] = []
    texts: dict[int, list[Row]] = defaultdict(list)
    for item, reviewer, verdict, confidence, prior_work, notes in views.explorer_reviews(study):
        n = item_index[item]
        core.append([n, reviewer_index.get(reviewer, -1), verdict, confidence])
        texts[n].append([prior_work, notes])
    return core, texts


def _searches(
    study: Study, item_index: dict[str, int], reviewer_index: dict[str, int]
) -> dict[int, list[Row]]:
    """Per item: [reviewer, database, query, run_at, total_hits, filters, hits, relevant_ids].

    `hits` and `relevant_ids` stay the JSON text the store holds; the page parses them when it
    shows the search, which keeps writing a large study's page fast."""
    out: dict[int, list[Row]] = defaultdict(list)
    for item, reviewer, *fields in views.explorer_searches(study):
        if item in item_index:
            out[item_index[item]].append([reviewer_index.get(reviewer, -1), *fields])
    return out


def _unblinded(study: Study, item_index: dict[str, int]) -> _Unblinded:
    """Topics, prompts and outputs, and the output of each item (-1: no output, e.g. control)."""
    topics = views.explorer_topics(study)
    topic_index = {row[0]: n for n, row in enumerate(topics)}
    prompts = views.explorer_prompts(study)
    prompt_index = {row[0]: n for n, row in enumerate(prompts)}
    outputs = views.explorer_outputs(study)
    output_index = {row[0]: n for n, row in enumerate(outputs)}
    item_output = [-1] * len(item_index)
    for item_id, output_id in views.item_outputs(study):
        item_output[item_index[item_id]] = output_index.get(output_id, -1)
    prompt_of = [prompt_index.get(o[1], -1) for o in outputs]
    core: JsonObject = {
        "topics": _table(
            [
                "topic_id",
                "field_a",
                "field_b",
                "domain_a",
                "domain_b",
                "concepts_a",
                "concepts_b",
                "relation",
            ],
            [[*t[:5], _json_list(t[5]), _json_list(t[6]), t[7]] for t in topics],
        ),
        "prompts": _table(
            ["prompt_id", "topic", "condition", "family"],
            [[p[0], topic_index.get(p[1], -1), *p[2:4]] for p in prompts],
        ),
        "outputs": _table(
            [
                "output_id",
                "prompt",
                "sample",
                "model",
                "status",
                "finish_reason",
                "model_key",
                "name",
            ],
            [
                [o[0], prompt_of[k], *o[2:6], o[8], model_name(o[8], o[3])]
                for k, o in enumerate(outputs)
            ],
        ),
        "item_output": [*item_output],
    }
    texts: Texts = {
        "prompts": [[p[4]] for p in prompts],
        "outputs": [[o[6], o[7]] for o in outputs],
    }
    output_parts: list[list[object]] = [[o[0], model_name(o[8], o[3]), o[6]] for o in outputs]
    prompt_parts: list[list[object]] = [[p[0], p[4]] for p in prompts]
    return _Unblinded(core, texts, item_output, output_parts, prompt_of, prompt_parts)


def model_name(key: str | None, model: str | None) -> str:
    """How the page names an output's model: its key in the study (`local#greedy`, so that two
    configurations of one model are two names), with the served model where the key does not
    say it (`local#greedy (SmolLM2-135M-Instruct)`)."""
    key, model = key or "", model or ""
    if not key:
        return model
    return key if not model or model in key else f"{key} ({model})"


def _real_accuracy(study: Study) -> JsonObject:
    """The primary reviewers' accuracy on the real items against the adjudicators, per arm, as
    the last analysis reported it (report/report.json); empty without an adjudicated sample."""
    try:
        saved = json.loads((study.report_dir / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        saved = {}
    rows = (saved.get("adjudication") or {}).get("accuracy") or []
    names = ["label", "arm", "published", "sensitivity", "sensitivity_low", "sensitivity_high"]
    names += ["unpublished", "specificity", "specificity_low", "specificity_high"]
    return _table(names, [[row.get(n) for n in names] for row in rows])


def _table(columns: list[str], rows: list[Row]) -> JsonObject:
    return {"columns": [*columns], "rows": [*rows]}


def _json_list(text: str | None) -> Row:
    try:
        value: JsonValue = json.loads(text or "[]")
    except json.JSONDecodeError:
        return [text]
    return value if isinstance(value, list) else [value]
