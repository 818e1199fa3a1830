"""Control items: combinations with a known answer, mixed into the blinded stream.

Sources: the study's topics' bank entries (`known_links`, cross-field; `known_within_a` and
`known_within_b` when the bank has them, single-field) split by the cut-off's year (before it:
`published`; after it: `not_published`, since a reviewer who respects the cut-off must not count
later work; in its own year: left out, since a year alone cannot place it), and a controls file.

A control becomes an item in exactly the form of a real one: the study's model writes a short
text from the one-sentence statement with a fixed prompt (`prompts/judge/control.j2`), the
normal blinded steps then run on it, and its id comes from the same random generator.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import secrets
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.defaults import materials_dir
from harness.errors import HarnessError
from harness.judge import defaults as D
from harness.judge.controls_file import FileControl
from harness.judge.items import new_item_id
from harness.study.store import Study
from harness.study.tables.controls import NewControl, insert_controls
from harness.study.tables.items import NewItem, insert_items, item_ids
from harness.study.tables.judge_reads import ok_output_params, topic_entries

Expected = Literal["published", "not_published"]
BANK_LISTS: tuple[tuple[str, Literal["cross", "single"]], ...] = (
    ("known_links", "cross"),
    ("known_within_a", "single"),
    ("known_within_b", "single"),
)


@dataclass(frozen=True)
class Candidate:
    """A control that could enter the study."""

    control_id: str
    statement: str
    expected: Expected
    kind: Literal["cross", "single"]
    source: str  # 'bank' | 'file:NAME'
    topic_id: str | None
    evidence: dict[str, Any] | None
    text: str | None = None


@dataclass
class Pool:
    """Candidates and what was left out, and why."""

    candidates: list[Candidate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def control_id(source: str, topic_id: str | None, statement: str) -> str:
    digest = hashlib.sha256(f"{source}\t{topic_id or ''}\t{statement}".encode()).hexdigest()
    return "C-" + digest[:12]


def first_sentence(text: str) -> str:
    """The summary's first sentence (a summary names what was combined in its first one)."""
    from harness.judge.items import _SENTENCE_END

    match = _SENTENCE_END.search(text.strip())
    return text.strip()[: match.end()] if match else text.strip()


# -- candidates -----------------------------------------------------------------------------------
def bank_pool(study: Study, cutoff: str | None) -> Pool:
    """Controls from the bank entries of the study's topics, split by the cut-off's year."""
    pool = Pool()
    cut = _cut_year(cutoff)
    same_year = 0
    for topic_id, entry in topic_entries(study):
        for key, kind in BANK_LISTS:
            for link in entry.get(key) or []:
                expected = _expected(int(link["year"]), cut)
                if expected is None:
                    same_year += 1
                    continue
                statement = first_sentence(str(link["summary"]))
                evidence = {
                    "title": link["title"],
                    "year": int(link["year"]),
                    "doi": link.get("doi"),
                }
                pool.candidates.append(
                    Candidate(
                        control_id("bank", topic_id, statement),
                        statement,
                        expected,
                        kind,
                        "bank",
                        topic_id,
                        evidence,
                    )
                )
    if cutoff is None:
        pool.notes.append(
            "no --cutoff: every known link counts as published, so there are no "
            "time-split unpublished controls"
        )
    elif same_year:
        pool.notes.append(
            f"{same_year} known link(s) from the cut-off's own year {cut[0]} left "
            "out (a year alone cannot place them before or after the cut-off)"
        )
    return pool


def _cut_year(cutoff: str | None) -> tuple[int | None, bool]:
    """(year, whether that year's links count as published): only a 31 December cut-off
    covers its whole year."""
    if cutoff is None:
        return None, True
    return int(cutoff[:4]), cutoff[5:] == "12-31"


def _expected(year: int, cut: tuple[int | None, bool]) -> Expected | None:
    cut_year, own_year_published = cut
    if cut_year is None or year < cut_year or (year == cut_year and own_year_published):
        return "published"
    return "not_published" if year > cut_year else None


def file_pool(entries: list[FileControl], name: str) -> Pool:
    source = f"file:{name}"
    pool = Pool()
    for item in entries:
        e = item.entry
        evidence = e.evidence.model_dump() if e.evidence is not None else None
        pool.candidates.append(
            Candidate(
                control_id(source, None, e.statement),
                e.statement,
                e.expected,
                e.kind,
                source,
                None,
                evidence,
                e.text,
            )
        )
    return pool


# -- how many, and which --------------------------------------------------------------------------
def targets(
    real_counts: dict[str, int], share: float, minimum: int, room: dict[str, int]
) -> dict[str, int]:
    """Controls per reviewer: about `share` x real items, at least `minimum`, within capacity."""
    return {r: max(0, min(room[r], max(minimum, round(share * n)))) for r, n in real_counts.items()}


def items_needed(per_reviewer: dict[str, int], k: int) -> int:
    """Control items so that k reviewers each can give every reviewer its number."""
    reachable = sum(1 for n in per_reviewer.values() if n > 0)
    k_eff = max(1, min(k, reachable))
    return math.ceil(sum(per_reviewer.values()) / k_eff) if reachable else 0


def select(candidates: list[Candidate], n: int, seed: int) -> list[Candidate]:
    """n controls, half published and half unpublished where both exist, kinds interleaved;
    file controls come before bank ones within each half."""
    rng = random.Random(seed)
    groups = {
        e: _ordered([c for c in candidates if c.expected == e], rng)
        for e in ("published", "not_published")
    }
    want_pub = min(len(groups["published"]), math.ceil(n / 2))
    want_not = min(len(groups["not_published"]), n - want_pub)
    want_pub = min(len(groups["published"]), n - want_not)
    return groups["published"][:want_pub] + groups["not_published"][:want_not]


def _ordered(group: list[Candidate], rng: random.Random) -> list[Candidate]:
    files = [c for c in group if c.source != "bank"]
    bank = sorted((c for c in group if c.source == "bank"), key=lambda c: c.control_id)
    by_kind = {kind: [c for c in bank if c.kind == kind] for kind in ("cross", "single")}
    for members in by_kind.values():
        rng.shuffle(members)
    mixed = [c for pair in _zip_longest(by_kind["cross"], by_kind["single"]) for c in pair]
    return files + _spread_topics(mixed)


def _spread_topics(order: list[Candidate]) -> list[Candidate]:
    """Each topic's first control before any topic's second: a human reviewer may take only
    one item per topic, so controls of many topics route more easily."""
    seen: Counter[str | None] = Counter()
    ranked = []
    for index, c in enumerate(order):
        ranked.append((seen[c.topic_id], index, c))
        seen[c.topic_id] += 1
    return [c for _, _, c in sorted(ranked, key=lambda t: (t[0], t[1]))]


def _zip_longest(a: list[Candidate], b: list[Candidate]) -> list[list[Candidate]]:
    return [
        [x for x in (a[i] if i < len(a) else None, b[i] if i < len(b) else None) if x]
        for i in range(max(len(a), len(b)))
    ]


def splits(chosen: list[Candidate], share: float, seed: int) -> dict[str, str]:
    """control_id -> 'calibration' | 'held_out', stratified by expected verdict, seeded."""
    rng = random.Random(seed + 1)
    out = {}
    for expected in ("published", "not_published"):
        ids = sorted(c.control_id for c in chosen if c.expected == expected)
        rng.shuffle(ids)
        n_cal = int(share * len(ids) + 0.5)  # half up, not to even: 5 x 0.5 gives 3
        out.update({cid: "calibration" if i < n_cal else "held_out" for i, cid in enumerate(ids)})
    return out


# -- writing the texts and storing --------------------------------------------------------------
def writer_template() -> Path:
    path = materials_dir("prompts") / D.CONTROL_TEMPLATE
    if not path.is_file():
        raise HarnessError("prompt template of the control texts not found", file=path)
    return path


def output_params(study: Study, seed: int) -> Any:
    """The sampling settings of the study's outputs, so control texts come out alike."""
    from harness.models.base import GenerationParams

    found = Counter(ok_output_params(study))
    params = json.loads(found.most_common(1)[0][0]) if found else {}
    base = GenerationParams()

    def value(name: str) -> Any:  # None: a parameter the model's requests left out
        found = params.get(name)
        return getattr(base, name) if found is None else found

    return GenerationParams(
        temperature=float(value("temperature")),
        top_p=float(value("top_p")),
        max_tokens=int(value("max_tokens")),
        seed=seed,
    )


def write_texts(
    chosen: list[Candidate], backend: Any, params: Any
) -> tuple[dict[str, str], list[str]]:
    """control_id -> short text by the model, for controls without their own text."""
    from harness.judge.items import _template
    from harness.models.base import ChatRequest

    template = _template(writer_template())
    requests = [
        ChatRequest(
            key=c.control_id,
            messages=[{"role": "user", "content": template.render(statement=c.statement)}],
        )
        for c in chosen
        if c.text is None
    ]
    texts, errors = {}, []
    if requests:
        for completion in backend.complete(requests, params):
            if completion.error is not None or not (completion.text or "").strip():
                errors.append(f"control text {completion.key}: {completion.error or 'empty'}")
                continue
            texts[completion.key] = completion.text
    return texts, errors


def store_controls(
    study: Study, chosen: list[Candidate], texts: dict[str, str], split_of: dict[str, str]
) -> int:
    """Controls and their items in one transaction, items with fresh random ids."""
    taken = item_ids(study)
    controls, items = [], []
    order = list(chosen)
    secrets.SystemRandom().shuffle(order)
    for c in order:
        text = c.text or texts[c.control_id]
        controls.append(
            NewControl(
                c.control_id,
                c.statement,
                text,
                c.expected,
                c.kind,
                c.source,
                c.topic_id,
                c.evidence or {},
                split_of[c.control_id],
            )
        )
        item_id = new_item_id()
        while item_id in taken:
            item_id = new_item_id()
        taken.add(item_id)
        items.append(NewItem(item_id, text, control_id=c.control_id))
    with study.transaction() as conn:
        insert_controls(conn, controls)
        insert_items(conn, items)
    return len(items)
