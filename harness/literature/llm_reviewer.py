"""The `llm:MODEL` reviewer: a model searches the literature through the harness, then judges.

Protocol (one line per reply): `SEARCH: <query>` runs the query on every configured source and
shows the numbered hits; `VERDICT: published [n]`, `VERDICT: not_published` or
`VERDICT: unsure` ends the review. At least one search must precede a verdict, at most
`max_queries` are run, and a `published` verdict must cite a hit that was shown; otherwise it
is recorded as `unsure`. A calibrated reviewer also requires the stated confidence of a
`published` verdict to reach its threshold (`LlmAssessment`). Every query, hit and reply is kept.

A review recorded as `unsure` because the model broke the protocol (no valid reply after a
reminder, or a `published` verdict citing no shown hit) says so in its notes: `off_protocol`
holds the reply that broke it, so `judge --auto` can tell a reviewer that does not follow the
protocol from one that is unsure (`harness.judge.automated.unsure_limit`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from harness.errors import HarnessError
from harness.literature.base import Hit, SearchRecord, Source
from harness.literature.defaults import LLM_HITS_SHOWN, LLM_MAX_TOKENS
from harness.literature.reviewer_base import (
    Decision,
    Notes,
    Reviewer,
    ReviewerContext,
    ReviewerMethod,
    Search,
)
from harness.models import GenerationParams, chat, open_spec
from harness.models.base import ModelAPI
from harness.models.throughput import Meter

__all__ = ["LLM", "LlmAssessment", "LlmReviewer", "parse_reply"]

SYSTEM = (
    "You are a careful literature reviewer. You decide whether the core combination of a "
    "research idea (what is combined with what, for which purpose) has already been "
    "published. You can search a literature database. Reply with exactly one line:\n"
    "SEARCH: <keywords>   to search (short keyword queries work best)\n"
    "VERDICT: published [n]   if hit number n already combines the same elements for the same "
    "purpose\n"
    "VERDICT: not_published   if your searches found no such work\n"
    "VERDICT: unsure   if you cannot decide\n"
    "You may add CONFIDENCE: 1-5 after a verdict. Search before you give a verdict."
)
PROMPT_SHA256 = hashlib.sha256(SYSTEM.encode()).hexdigest()
MAX_TEXT_CHARS = 1500
MAX_REPLY_CHARS = 300

_SEARCH = re.compile(r"\bSEARCH\s*:\s*(.+)", re.IGNORECASE)
_VERDICT = re.compile(r"\bVERDICT\s*:\s*\**\s*(not[ _-]?published|published|unsure)", re.IGNORECASE)
_CITE = re.compile(r"(?:\[|#|\bhit\s+)(\d{1,3})\]?", re.IGNORECASE)
_CONFIDENCE = re.compile(r"\bCONFIDENCE\s*:\s*([1-5])\b", re.IGNORECASE)


@dataclass
class Action:
    kind: Literal["search", "verdict", "invalid"]
    query: str = ""
    verdict: str = ""
    cited: int | None = None  # hit number
    confidence: int | None = None


def parse_reply(reply: str) -> Action:
    """The first SEARCH or VERDICT line of a reply; anything else is invalid."""
    search = _SEARCH.search(reply)
    verdict = _VERDICT.search(reply)
    if search and (not verdict or search.start() < verdict.start()):
        query = search.group(1).splitlines()[0].strip().strip("\"'`<>[]").strip()
        return Action("search", query=query) if query else Action("invalid")
    if verdict:
        word = verdict.group(1).lower().replace(" ", "_").replace("-", "_")
        word = "not_published" if word.startswith("not") else word
        rest = reply[verdict.end() :]
        cite = _CITE.search(rest)
        confidence = _CONFIDENCE.search(reply)
        return Action(
            "verdict",
            verdict=word,
            cited=int(cite.group(1)) if cite else None,
            confidence=int(confidence.group(1)) if confidence else None,
        )
    return Action("invalid")


@dataclass
class LlmAssessment:
    """How a model's review ended, before the decision rule makes it a verdict.

    The rule: a `published` verdict that cites a shown hit counts when its stated confidence
    (0 when unstated) reaches the threshold, else it is recorded as `not_published`. The
    default threshold 0 accepts every cited `published` verdict, i.e. the model's own answer.
    """

    action: Action | None  # None: no valid verdict after a reminder
    shown: list[tuple[Hit, SearchRecord]]
    records: list[SearchRecord]
    notes: Notes

    def _cited(self) -> tuple[Hit, SearchRecord] | None:
        action = self.action
        if action is None or action.verdict != "published" or action.cited is None:
            return None
        return self.shown[action.cited - 1] if 1 <= action.cited <= len(self.shown) else None

    @property
    def score(self) -> float | None:
        """The stated confidence of a cited `published` verdict (0 if unstated), else None."""
        action = self.action
        if action is None or self._cited() is None:
            return None
        return float(action.confidence or 0)

    @property
    def otherwise(self) -> str:
        if self.action is None or self.action.verdict == "published":
            return "unsure"  # no verdict, or `published` citing nothing shown
        return self.action.verdict

    def decide(self, threshold: float = 0.0) -> Decision:
        notes = dict(self.notes)
        searches = [Search(record) for record in self.records]
        action = self.action
        if action is None:
            notes["rejected"] = "no valid verdict after a reminder; recorded as unsure"
            return Decision("unsure", None, None, notes, searches)
        if action.verdict != "published":
            return Decision(action.verdict, action.confidence, None, notes, searches)
        cited = self._cited()
        if cited is None:
            notes["rejected"] = "verdict 'published' cited no retrieved work; recorded as unsure"
            replies = notes.get("replies")
            notes["off_protocol"] = replies[-1] if isinstance(replies, list) and replies else ""
            return Decision("unsure", action.confidence, None, notes, searches)
        hit, record = cited
        notes["cited"] = {"id": hit.id, "database": record.database, "number": action.cited}
        if (action.confidence or 0) < threshold:
            notes["rule"] = (
                f"'published' with confidence {action.confidence or 'unstated'} "
                f"is below the calibrated minimum {threshold:g}; recorded as "
                "not_published"
            )
            return Decision("not_published", action.confidence, None, notes, searches)
        for search in searches:
            if search.record is record:
                search.relevant.append(hit.id)
        return Decision(
            "published", action.confidence, f"{hit.cite()} via {record.database}", notes, searches
        )


class LlmReviewer(Reviewer):
    """Runs the search-then-judge conversation with one model backend."""

    #: The model reads the item's text beside its core combination.
    reads_full_text = True
    meter: Meter

    def __init__(
        self,
        backend: ModelAPI,
        sources: list[Source],
        *,
        cutoff: str | date | None = None,
        max_queries: int = 3,
        limit: int = LLM_HITS_SHOWN,
        max_tokens: int = LLM_MAX_TOKENS,
        threshold: float = 0.0,
    ) -> None:
        self.backend = backend
        self.sources = sources
        self.cutoff = cutoff
        self.max_queries = max(1, max_queries)
        self.limit = limit
        self.threshold = threshold
        self.params = GenerationParams(temperature=0.0, top_p=1.0, max_tokens=max_tokens, seed=0)
        self.meter = Meter("llm review")  # tokens and time of every reply, for the manifest

    def assess(self, text: str, stop_at: float | None = None) -> LlmAssessment:
        """The whole conversation (`stop_at` is unused: a model decides when to stop)."""
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": _item_message(text)},
        ]
        shown: list[tuple[Hit, SearchRecord]] = []
        records: list[SearchRecord] = []
        replies: list[str] = []
        strikes = 0
        broken: str | None = None  # the first reply that broke the protocol
        while True:
            reply = chat(self.backend, messages, self.params, self.meter)
            replies.append(reply[:MAX_REPLY_CHARS])
            action = parse_reply(reply)
            messages.append({"role": "assistant", "content": reply})
            if action.kind == "search" and len(records) < self.max_queries:
                numbered = self._search(action.query, shown, records)
                left = self.max_queries - len(records)
                follow = (
                    "Reply with SEARCH or VERDICT."
                    if left
                    else "No searches left. Reply with your VERDICT."
                )
                messages.append({"role": "user", "content": f"{numbered}\n\n{follow}"})
                continue
            if action.kind == "verdict" and records:
                return LlmAssessment(action, shown, records, self._notes(records, replies))
            strikes += 1
            broken = reply[:MAX_REPLY_CHARS] if broken is None else broken
            if strikes > 1:
                notes = self._notes(records, replies)
                notes["off_protocol"] = broken
                return LlmAssessment(None, shown, records, notes)
            messages.append({"role": "user", "content": self._reminder(action, records)})

    def _reminder(self, action: Action, records: list[SearchRecord]) -> str:
        if action.kind == "verdict":
            return "Search first: reply with one line, SEARCH: <keywords>."
        if len(records) >= self.max_queries:
            return (
                "No searches left. Reply with one line: VERDICT: published [n], "
                "VERDICT: not_published or VERDICT: unsure."
            )
        return "Reply with exactly one line starting with SEARCH: or VERDICT:."

    def _search(
        self, query: str, shown: list[tuple[Hit, SearchRecord]], records: list[SearchRecord]
    ) -> str:
        lines = []
        for source in self.sources:
            record = source.search(query, cutoff=self.cutoff, limit=self.limit)
            records.append(record)
            lines.append(f"{record.database}: {record.total_hits or 0} hits for {query!r}")
            for hit in record.hits:
                shown.append((hit, record))
                abstract = (hit.abstract or "")[:200]
                year = f" ({hit.year})" if hit.year else ""
                lines.append(f"[{len(shown)}] {hit.title}{year}. {abstract}".rstrip())
        return "\n".join(lines)

    def _notes(self, records: list[SearchRecord], replies: list[str]) -> Notes:
        return {
            "reviewer": "llm",
            "backend": getattr(self.backend, "name", None),
            "model": getattr(self.backend, "model", None),
            "prompt_sha256": PROMPT_SHA256,
            "queries": list(dict.fromkeys(r.query for r in records)),
            "replies": replies,
        }


def _item_message(text: str) -> str:
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS] + " [...]"
    return f"Research idea:\n{text}\n\nStart by searching: reply with one line, SEARCH: <keywords>."


def _build(context: ReviewerContext) -> LlmReviewer:
    """The reviewer on its resolved model; a missing model, key or server names the reviewer."""
    spec = context.model
    if spec is None:
        raise HarnessError(
            f"reviewer {context.reviewer_id!r} (method: {context.method}): no model resolved",
            column="method",
        )
    try:
        opened = open_spec(spec, **(context.server if spec.backend == "openai" else {}))
    except HarnessError as error:
        raise type(error)(
            f"reviewer {context.reviewer_id!r} (method: {context.method}, model {spec.key}): "
            f"{error.message}",
            file=error.file,
            column=error.column,
        ) from None
    return LlmReviewer(
        opened,
        context.open_sources(False),
        cutoff=context.cutoff,
        max_queries=context.max_queries,
        threshold=context.threshold,
    )


LLM = ReviewerMethod(
    name="llm",
    label="a model searches, reads the hits and gives a verdict",
    rule="a published verdict citing a shown hit counts when its stated confidence "
    "(0 if unstated) >= threshold, else not_published",
    default_threshold=0.0,
    build=_build,
    argument="MODEL",
    needs_model=True,
    user_threshold=False,
)
