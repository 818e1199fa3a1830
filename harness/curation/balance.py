"""Token balance of the three conditions of every topic (the match audit over the whole bank)
and the lengths of concepts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from harness.curation.entries import Located
from harness.curation.rules import Finding, Rules, Section
from harness.defaults import DEFAULT_SEED, materials_dir
from harness.generation.generate_stage import Tokenizer, render_prompts
from harness.generation.match_audit import audit_prompts
from harness.generation.token_count import prompt_tokenizer
from harness.materials.taxonomy import Taxonomy
from harness.materials.templates import load_families
from harness.materials.topics import TopicBank


def check_tokens(
    located: list[Located],
    taxonomy: Taxonomy,
    rules: Rules,
    prompts: Path | None = None,
    tokenizer: Tokenizer | None = None,
) -> Section:
    """Render the bank's prompts as `generate` would (bundled templates, default seed) and audit."""
    section = Section("token balance")
    if not located:
        section.summary.append("no valid topics")
        return section
    if tokenizer is None:
        tokenizer = prompt_tokenizer()  # generate's counts, without transformers
    families = load_families(prompts or materials_dir("prompts") / "generate")
    bank = TopicBank(
        topics=[x.topic for x in located], taxonomy=taxonomy, taxonomy_file=Path("taxonomy.yaml")
    )
    rows = render_prompts(bank, families, None, DEFAULT_SEED, tokenizer)
    audit = audit_prompts(rows)
    by_id = {x.topic.id: x for x in located}
    counts: dict[str, list[int]] = {}
    for row in rows:
        counts.setdefault(row.topic_id, []).append(row.n_tokens)
    for tid, n in counts.items():
        spread = max(n) - min(n)
        if spread > rules.warn_token_range:
            target = section.findings if spread > rules.max_token_range else section.warnings
            target.append(
                by_id[tid].finding(
                    f"prompts differ by {spread} tokens across conditions (warn > "
                    f"{rules.warn_token_range}, fail > {rules.max_token_range}); make the concepts' "
                    "lengths more alike"
                )
            )
    section.findings.extend(by_id[f.split(":")[0]].finding(f) for f in audit.structure_failures)
    for name, d in audit.diff.items():
        section.summary.append(
            f"paired diff {name}: mean {d['mean']:+.2f}, sd {d['sd']:.2f}, "
            f"max |d| {d['max_abs']} tokens (rule: |mean| <= "
            f"{rules.max_mean_token_diff})"
        )
        if abs(d["mean"]) > rules.max_mean_token_diff:
            section.findings.append(
                Finding(
                    f"prompts of {name.replace('-', ' and ')} differ by {d['mean']:+.2f} tokens on "
                    f"average (rule: |mean| <= {rules.max_mean_token_diff})"
                )
            )
    section.summary.append(
        f"worst topic {audit.worst_topic}: range {audit.worst_range} tokens "
        f"(warn > {rules.warn_token_range}, fail > {rules.max_token_range}); "
        f"{len(section.warnings)} topic(s) over the warning level"
    )
    section.stats = audit.summary_dict()
    return section


def check_concepts(located: list[Located], rules: Rules) -> Section:
    section = Section("concept lengths")
    low, high = rules.concept_words
    words: Counter[int] = Counter()
    for x in located:
        for concept in [*x.topic.concepts_a, *x.topic.concepts_b]:
            n = len(concept.split())
            words[n] += 1
            if not low <= n <= high:
                section.findings.append(
                    x.finding(f"concept {concept!r} has {n} word(s) (rule: {low}-{high})")
                )
    spread = ", ".join(f"{n} words: {c}" for n, c in sorted(words.items()))
    section.summary.append(f"{sum(words.values())} concepts ({spread}); rule {low}-{high} words")
    section.stats = {"words": {str(k): v for k, v in sorted(words.items())}}
    return section
