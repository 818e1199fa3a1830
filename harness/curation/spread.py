"""Spread of the bank over fields and domain pairs, against the curation rules."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from harness.curation.entries import Located
from harness.curation.rules import Finding, Rules, Section
from harness.materials.subset import choose_subset, coverage
from harness.materials.taxonomy import Taxonomy


def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def check_spread(located: list[Located], taxonomy: Taxonomy, rules: Rules) -> Section:
    section = Section("field and domain spread")
    n = len(located)
    fields: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    domains: Counter[tuple[str, str]] = Counter()
    for x in located:
        fa, fb = taxonomy.known_field(x.topic.field_a), taxonomy.known_field(x.topic.field_b)
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
            section.findings.append(
                Finding(
                    f"field {name!r} is in {count} topics (rule: at most {cap} = max of "
                    f"{rules.max_field_share:.0%} of {n} topics and {rules.field_cap_floor})"
                )
            )
    need = rules.min_field_pairs(n)
    if len(pairs) < need:
        section.findings.append(
            Finding(f"{len(pairs)} distinct field pairs (rule: at least {need} for {n} topics)")
        )
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
        "topics": n,
        "field_pairs": len(pairs),
        "min_field_pairs": need,
        "domain_pairs": {f"{a} x {b}": c for (a, b), c in sorted(domains.items())},
        "fields": dict(sorted(fields.items())),
        "max_field_topics": top_count,
        "max_field_share": round(top_count / max(n, 1), 4),
        "field_cap": cap,
    }
    return section


def check_subset(located: list[Located], taxonomy: Taxonomy, size: int, seed: int) -> Section:
    """What the seeded subset of `size` topics (the demo's `--subset`) keeps of the spread; a
    domain pair of the bank that the subset misses is a warning (it can only happen below 6)."""
    section = Section(f"subset --subset {size} --subset-seed {seed}")
    topics = [x.topic for x in located]
    if size > len(topics):
        section.summary.append(f"the bank has {len(topics)} topics, fewer than {size}")
        return section
    whole, part = (
        coverage(topics, taxonomy),
        coverage(choose_subset(topics, taxonomy, size, seed), taxonomy),
    )
    section.summary += [
        f"{part['topics']} of {whole['topics']} topics: {part['field_pairs']} of "
        f"{whole['field_pairs']} field pairs, {part['domain_pairs']} of "
        f"{whole['domain_pairs']} domain pairs",
        "domain pairs: " + ", ".join(f"{k} {v}" for k, v in part["per_domain_pair"].items()),
    ]
    for name in sorted(set(whole["per_domain_pair"]) - set(part["per_domain_pair"])):
        section.warnings.append(Finding(f"the subset has no topic of the domain pair {name}"))
    section.stats = {"size": size, "seed": seed, **part}
    return section
