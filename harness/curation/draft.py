"""`harness topics draft`: candidate topics from a model, written to a review file.

Each candidate is asked for in its own request (fields named, concepts and relation wanted as
JSON). Replies that do not parse into a valid topic are asked again with another seed; if one
still fails, nothing is written. The review file is checked together with the bank, and every
finding is written beside its candidate as a YAML comment. Links are never drafted: the curator
adds only publications they have verified.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.curation.entries import read_banks
from harness.curation.pairs import field_pairs, missing_pairs, plan_requests
from harness.curation.review_file import refuse_bank_file, write_review
from harness.defaults import materials_dir
from harness.errors import HarnessError
from harness.materials.topics import validate_entry
from harness.models import ChatRequest, GenerationParams, open_spec
from harness.models.providers import model_flags

if TYPE_CHECKING:  # pydantic models and YAML: they load in `draft_topics`
    from harness.curation.check import CheckReport
    from harness.curation.pairs import DraftRequest
    from harness.materials.taxonomy import Taxonomy
    from harness.materials.topics import Topic
    from harness.models.base import GenerationParams, ModelAPI

SYSTEM = "You help curate a research topic bank. You answer with one JSON object and nothing else."
ASK = """Propose one topic that pairs two distant research fields.
Field A: {field_a} ({desc_a})
Field B: {field_b} ({desc_b})

Give two distinct, concrete technical concepts of field A and two of field B, each 2-4 words,
all of similar length. The first concept of A combined with the first concept of B must not
already be a well-known research area. Give a short relation phrase that reads naturally in
"Examine <relation> between X and Y" for any two of the four concepts.
Do not use any of these concepts: {avoid}.

Answer with JSON only, in this form:
{{"concepts_a": ["...", "..."], "concepts_b": ["...", "..."], "relation": "..."}}"""


@dataclass
class DraftResult:
    path: Path
    candidates: list[Topic]
    report: CheckReport  # of bank + candidates

    def summary(self) -> str:
        notes = self.report.findings_by_topic()
        flagged = sum(t.id in notes for t in self.candidates)
        return (
            f"check of bank + candidates: {'passed' if self.report.ok else 'FAILED'}; "
            f"{flagged} of {len(self.candidates)} candidates have findings (written beside "
            f"them in {self.path})"
        )


def messages(request: DraftRequest, tax: Taxonomy, avoid: list[str]) -> list[dict[str, str]]:
    fa, fb = tax.field(request.field_a), tax.field(request.field_b)
    assert fa is not None and fb is not None  # pairs come from the taxonomy
    text = ASK.format(
        field_a=fa.name,
        desc_a=fa.description,
        field_b=fb.name,
        desc_b=fb.description,
        avoid=", ".join(avoid) or "(none)",
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def parse_reply(text: str, request: DraftRequest, tax: Taxonomy) -> Topic:
    """The topic in a reply (the first JSON object in it), validated like a bank entry."""
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    if match is None:
        raise ValueError("no JSON object in the reply")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as error:
        raise ValueError(f"reply is not valid JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("reply is not a JSON object")
    raw: dict[str, object] = {
        "id": request.topic_id,
        "field_a": request.field_a,
        "field_b": request.field_b,
        **{k: data.get(k) for k in ("concepts_a", "concepts_b", "relation")},
    }
    try:
        return validate_entry(raw, tax, Path("reply"), None, "")
    except HarnessError as error:
        raise ValueError(error.message) from None


def ask_model(
    backend: ModelAPI,
    requests: list[DraftRequest],
    tax: Taxonomy,
    avoid: list[str],
    params: GenerationParams,
    attempts: int,
) -> list[Topic]:
    """One valid topic per request; each failed reply is asked again with the next seed."""
    done: dict[str, Topic] = {}
    problems: dict[str, str] = {}
    pending = list(requests)
    for attempt in range(attempts):
        chats = [ChatRequest(r.topic_id, messages(r, tax, avoid)) for r in pending]
        seed = None if params.seed is None else params.seed + attempt
        by_id = {r.topic_id: r for r in pending}
        for completion in backend.complete(chats, replace(params, seed=seed)):
            request = by_id[completion.key]
            if completion.error is not None or completion.text is None:
                problems[request.topic_id] = f"request failed: {completion.error or 'no text'}"
                continue
            try:
                done[request.topic_id] = parse_reply(completion.text, request, tax)
            except ValueError as error:
                excerpt = " ".join(completion.text.split())[:80]
                problems[request.topic_id] = f"{error} (reply began: {excerpt!r})"
        pending = [r for r in pending if r.topic_id not in done]
        if not pending:
            break
    if pending:
        first = pending[0]
        raise HarnessError(
            f"{len(pending)} of {len(requests)} candidates had no usable reply after {attempts} "
            f"attempt(s); nothing written. First: {first.field_a} x {first.field_b}: "
            f"{problems.get(first.topic_id, 'no reply')}",
            row=first.topic_id,
        )
    return [done[r.topic_id] for r in requests]


def draft_topics(
    out: Path,
    *,
    fields: list[str] | None = None,
    missing: int | None = None,
    per_pair: int = 1,
    bank: list[Path] | None = None,
    backend: str | None = None,
    model: str | None = None,
    params: GenerationParams | None = None,
    attempts: int = 3,
    check: Any = None,
    **options: Any,
) -> DraftResult:
    """Draft candidate topics into the review file `out` (never into a bank), checked with the
    bank. Give `fields` (pairs across domains among them) or `missing` (absent pairs).

    `model` is a provider string (default: the embedded model; `backend` is the older way to
    name its provider); `options` are its backend's (`base_url`, ...)."""
    spec = model_flags(model, backend)  # refused before the bank is read
    if (fields is None) == (missing is None):
        raise HarnessError("give either --fields or --missing-pairs")
    if per_pair < 1 or attempts < 1 or (missing is not None and missing < 1):
        raise HarnessError("--per-pair, --attempts and --missing-pairs must be at least 1")
    bank = bank or [materials_dir("topics") / "bank.yaml"]
    refuse_bank_file(out, bank)
    located, tax, schema = read_banks(bank)
    if not schema.ok:
        raise HarnessError(f"the bank has schema errors; first: {schema.findings[0]}")
    topics = [x.topic for x in located]
    pairs = (
        field_pairs(fields, tax) if fields is not None else missing_pairs(topics, tax, missing or 0)
    )
    if not pairs:
        raise HarnessError("the bank already has every cross-domain field pair")
    requests = plan_requests(pairs, per_pair, topics)
    avoid = sorted(
        {
            c
            for t in topics
            if {t.field_a, t.field_b} & {p for pr in pairs for p in pr}
            for c in [*t.concepts_a, *t.concepts_b]
        }
    )
    params = params or GenerationParams(temperature=0.8, max_tokens=200, seed=0)
    model_backend = open_spec(spec, **options)
    drafted = ask_model(model_backend, requests, tax, avoid, params, attempts)
    source = f"backend {spec.backend}, model {model_backend.model} ({spec.key})"
    report = write_review(out, drafted, bank, source, check)
    return DraftResult(out, drafted, report)
