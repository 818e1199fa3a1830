"""Which candidates to draft: field pairs (given, or those the bank lacks) and their new ids."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import combinations

from harness.errors import HarnessError
from harness.materials.taxonomy import OTHER_DOMAIN, Taxonomy
from harness.materials.topics import Topic


@dataclass(frozen=True)
class DraftRequest:
    field_a: str
    field_b: str
    topic_id: str


def field_pairs(fields: list[str], tax: Taxonomy) -> list[tuple[str, str]]:
    """Every pair of the given fields that lies in different domains (taxonomy names)."""
    found = []
    for name in fields:
        field = tax.field(name)
        if field is None:
            raise HarnessError(f"field {name!r} is not in the taxonomy", column="--fields")
        found.append(field)
    pairs = [
        (a.name, b.name) for a, b in combinations(found, 2) if tax.distance(a, b) == OTHER_DOMAIN
    ]
    if not pairs:
        raise HarnessError("no two of the given fields are in different domains", column="--fields")
    return pairs


def missing_pairs(bank: list[Topic], tax: Taxonomy, n: int) -> list[tuple[str, str]]:
    """The n cross-domain field pairs the bank lacks, least-used fields first (spreads the bank)."""
    used = Counter(f for t in bank for f in (t.field_a, t.field_b))
    have = {frozenset((t.field_a, t.field_b)) for t in bank}
    pairs = [
        (a.name, b.name)
        for a, b in combinations(tax.fields, 2)
        if tax.distance(a, b) == OTHER_DOMAIN and frozenset((a.name, b.name)) not in have
    ]
    pairs.sort(key=lambda p: (used[p[0]] + used[p[1]], max(used[p[0]], used[p[1]]), p))
    return pairs[:n]


def short_name(field: str, bank: list[Topic]) -> str:
    """The id prefix the bank already uses for a field, else its first word."""
    seen: Counter[str] = Counter()
    for t in bank:
        parts = t.id.split("-")
        if len(parts) >= 3:
            if t.field_a == field:
                seen[parts[0]] += 1
            if t.field_b == field:
                seen[parts[1]] += 1
    if seen:
        return seen.most_common(1)[0][0]
    return re.sub(r"[^a-z]", "", field.split()[0].casefold())[:5] or "field"


def plan_requests(
    pairs: list[tuple[str, str]], per_pair: int, bank: list[Topic]
) -> list[DraftRequest]:
    taken = {t.id for t in bank}
    out = []
    for a, b in pairs:
        stem = f"{short_name(a, bank)}-{short_name(b, bank)}"
        number = 1
        for _ in range(per_pair):
            while f"{stem}-{number:02d}" in taken:
                number += 1
            taken.add(f"{stem}-{number:02d}")
            out.append(DraftRequest(a, b, f"{stem}-{number:02d}"))
    return out
