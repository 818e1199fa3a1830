"""Spread of the bank over fields and domain pairs, against the curation rules."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Any

from harness.curation.entries import Located
from harness.curation.rules import Finding, Rules, Section


def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def check_spread(located: list[Located], taxonomy: Any, rules: Rules) -> Section:
    section = Section("field and domain spread")
    n = len(located)
    fields: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    domains: Counter[tuple[str, str]] = Counter()
    for x in located:
        fa, fb = taxonomy.field(x.topic.field_a), taxonomy.field(x.topic.field_b)
        fields.update([fa.name, fb.name])
        pairs[pair_key(fa.name, fb.name)] += 1
        domains[pair_key(taxonomy.domain_name(fa.domain), taxonomy.domain_name(fb.domain))] += 1
    names = sorted(d.name for d in taxonomy.domains)
    missing = [p for p in combinations(names, 2) if p not in domains]
    for a, b in missing:
        section.findings.append(Finding(f"no topic pairs the domains {a} and {b}"))
    cap = rules.max_field_topics(n)
    for name, count in sorted(fields.items()):
        if count > cap:
            section.findings.append(Finding(
                f"field {name!r} is in {count} topics (rule: at most {cap} = max of "
                f"{rules.max_field_share:.0%} of {n} topics and {rules.field_cap_floor})"))
    need = rules.min_field_pairs(n)
    if len(pairs) < need:
        section.findings.append(Finding(
            f"{len(pairs)} distinct field pairs (rule: at least {need} for {n} topics)"))
    top, top_count = fields.most_common(1)[0] if fields else ("-", 0)
    section.summary += [
        f"{n} topics, {len(pairs)} distinct field pairs (rule: >= {need}), "
        f"{len(domains)} of {len(names) * (len(names) - 1) // 2} domain pairs",
        f"most used field: {top} in {top_count} topics "
        f"({top_count / max(n, 1):.1%}; rule: <= {cap})",
        "domain pairs: " + ", ".join(f"{a} x {b} {c}" for (a, b), c in sorted(domains.items())),
        f"fields used: {len(fields)} of {len(taxonomy.fields)}",
    ]
    section.stats = {
        "topics": n, "field_pairs": len(pairs), "min_field_pairs": need,
        "domain_pairs": {f"{a} x {b}": c for (a, b), c in sorted(domains.items())},
        "fields": dict(sorted(fields.items())), "max_field_topics": top_count,
        "max_field_share": round(top_count / max(n, 1), 4), "field_cap": cap,
    }
    return section
