"""`generate`: matched prompts for every topic in every condition, stored with a match audit.

No model is loaded on the way: token counts come from the embedded tokenizer's cached
`tokenizers` form (`token_count`), field distances from a table (`field_distance`); each loads
its model only where no cache holds what is asked, with a progress line while it does.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from harness.defaults import DEFAULT_SEED, MIN_TOPICS, materials_dir
from harness.errors import HarnessError
from harness.generation.field_distance import field_distances
from harness.generation.match_audit import MatchAudit, audit_prompts
from harness.generation.token_count import prompt_tokenizer
from harness.materials.bank import load_topic_bank
from harness.materials.subset import SUBSET_RULE, choose_subset, coverage
from harness.materials.templates import Family, load_families, render, system_message
from harness.materials.topics import Topic, TopicBank
from harness.progress import status
from harness.study import Study
from harness.study.lock import creates_study
from harness.study.manifest import made_section, record_command, record_materials, record_section
from harness.study.manifest_sections import Generate
from harness.study.tables.meta import write_meta
from harness.study.tables.prompts import PromptRecord, insert_prompts, stored_prompts
from harness.study.tables.topics import TopicRecord, insert_topics

CONDITIONS = ("single_a", "single_b", "cross")


class Tokenizer(Protocol):
    """A Hugging Face tokenizer, as far as the token counts of the prompts use it."""

    def __call__(
        self, texts: list[str], *, add_special_tokens: bool
    ) -> Mapping[str, Sequence[Sequence[int]]]: ...


def slot_values(topic: Topic, condition: str) -> dict[str, str]:
    """Which concepts fill the slots: the conditions differ only in where the concepts come from."""
    a, b = topic.concepts_a, topic.concepts_b
    pairs = {
        "cross": (a[0], topic.field_a, b[0], topic.field_b),
        "single_a": (a[0], topic.field_a, a[1], topic.field_a),
        "single_b": (b[1], topic.field_b, b[0], topic.field_b),
    }
    c1, f1, c2, f2 = pairs[condition]
    return {
        "concept_1": c1,
        "field_1": f1,
        "concept_2": c2,
        "field_2": f2,
        "relation": topic.relation,
    }


def assign_families(topic_ids: list[str], families: list[Family], seed: int) -> dict[str, Family]:
    """Balanced, seeded: shuffle the topics, then deal families round-robin (counts differ <= 1)."""
    order = sorted(topic_ids)
    random.Random(seed).shuffle(order)
    return {tid: families[i % len(families)] for i, tid in enumerate(order)}


def render_prompts(
    bank: TopicBank, families: list[Family], system: str | None, seed: int, tokenizer: Tokenizer
) -> list[PromptRecord]:
    """The prompts of every topic in every condition, as the store keeps them."""
    chosen = assign_families([t.id for t in bank.topics], families, seed)
    drafts = []
    for topic in bank.topics:
        family = chosen[topic.id]
        for condition in CONDITIONS:
            rendered = render(family, slot_values(topic, condition))
            drafts.append((topic.id, condition, family, rendered))
    counts = tokenizer([d[3].text for d in drafts], add_special_tokens=False)["input_ids"]
    return [
        PromptRecord(
            f"{tid}.{cond}",
            tid,
            cond,
            fam.name,
            fam.sha256,
            system,
            r.text,
            len(ids),
            _json(r.spans),
        )
        for (tid, cond, fam, r), ids in zip(drafts, counts, strict=True)
    ]


@creates_study
def generate(
    study: str | Path,
    *,
    topics: Path | None = None,
    prompts: Path | None = None,
    seed: int = DEFAULT_SEED,
    pilot: bool = False,
    limit: int | None = None,
    subset: int | None = None,
    subset_seed: int | None = None,
    tokenizer: Tokenizer | None = None,
) -> MatchAudit:
    """Render, audit and store the matched prompts of a study. Returns the match audit.

    `limit` keeps the first N topics; `subset` N topics chosen by the seeded spread-keeping rule
    of harness.materials.subset (`subset_seed`, default `seed`)."""
    with status("reading the topic bank"):
        bank = load_topic_bank(topics)
    selection = select_topics(bank, limit, subset, seed if subset_seed is None else subset_seed)
    if len(bank.topics) < MIN_TOPICS and not pilot:
        raise HarnessError(
            f"{len(bank.topics)} topics; a study needs at least {MIN_TOPICS} "
            "(use --pilot for a pilot study, which can never yield the falsification verdict)",
            file=bank.files[0] if bank.files else None,
        )
    prompts_dir = prompts or materials_dir("prompts") / "generate"
    families = load_families(prompts_dir)
    system = system_message(prompts_dir)
    if tokenizer is None:
        tokenizer = prompt_tokenizer()
    with status(f"rendering {len(CONDITIONS) * len(bank.topics)} prompts and counting tokens"):
        rows = render_prompts(bank, families, system, seed, tokenizer)
        audit = audit_prompts(rows)
    topic_rows = _topic_rows(bank)
    with status("storing the prompts and the match audit"):
        _store(Path(study), topic_rows, rows, seed, pilot, selection)
        _record(Path(study), bank, families, prompts_dir, seed, pilot, audit, selection)
    return audit


def select_topics(
    bank: TopicBank, limit: int | None, subset: int | None, subset_seed: int
) -> dict[str, object]:
    """Narrow `bank.topics` to the study's topics; returns how they were chosen (manifest)."""
    if limit is not None and subset is not None:
        raise HarnessError(
            "--limit and --subset both choose the topics; give one of them", column="subset"
        )
    total = len(bank.topics)
    if subset is not None:
        bank.topics = choose_subset(bank.topics, bank.taxonomy, subset, subset_seed)
        return {
            "rule": "subset",
            "size": subset,
            "seed": subset_seed,
            "of": total,
            "description": SUBSET_RULE,
            **coverage(bank.topics, bank.taxonomy),
            "topic_ids": [t.id for t in bank.topics],
        }
    if limit is not None:
        bank.topics = bank.topics[:limit]
        return {
            "rule": "limit",
            "size": len(bank.topics),
            "of": total,
            "description": "the first topics of the bank in file order",
            "topic_ids": [t.id for t in bank.topics],
        }
    return {"rule": "all", "size": total, "of": total}


def _topic_rows(bank: TopicBank) -> list[TopicRecord]:
    tax = bank.taxonomy
    used = {n for t in bank.topics for n in (t.field_a, t.field_b)}
    fields = {n: tax.field(n) for n in used}
    embedded = field_distances({n: f.description for n, f in fields.items() if f})
    rows = []
    for t in bank.topics:
        fa, fb = fields[t.field_a], fields[t.field_b]
        assert fa is not None and fb is not None  # validated by the loader
        rows.append(
            TopicRecord(
                t.id,
                fa.name,
                fa.id,
                tax.domain_name(fa.domain),
                fb.name,
                fb.id,
                tax.domain_name(fb.domain),
                json.dumps(t.concepts_a),
                json.dumps(t.concepts_b),
                t.relation,
                tax.distance(fa, fb, t.subfield_a, t.subfield_b),
                embedded[(t.field_a, t.field_b)],
                json.dumps(t.model_dump(mode="json"), sort_keys=True),
            )
        )
    return rows


def _json(spans: Mapping[str, tuple[int, int]]) -> str:
    """Slot spans as the store keeps them: JSON {slot: [start, end]}, slots sorted."""
    return json.dumps({k: list(v) for k, v in sorted(spans.items())})


def _store(
    folder: Path,
    topic_rows: list[TopicRecord],
    new: list[PromptRecord],
    seed: int,
    pilot: bool,
    selection: Mapping[str, object],
) -> None:
    """Write topics and prompts in one transaction; a rerun must reproduce the stored prompts."""
    with Study.open(folder, create=True) as study:
        existing = stored_prompts(study)
        if existing:
            if existing != new:
                raise HarnessError(
                    "this study already holds different prompts (other topics, templates or "
                    "seed); generate into a new study folder",
                    file=folder,
                )
            return
        with study.transaction() as conn:
            insert_topics(conn, topic_rows)
            insert_prompts(conn, new)
            write_meta(conn, "pilot", str(int(pilot)))
            write_meta(conn, "seed", str(seed))
            write_meta(conn, "topic_selection", json.dumps(selection, sort_keys=True))


def _record(
    folder: Path,
    bank: TopicBank,
    families: list[Family],
    prompts_dir: Path,
    seed: int,
    pilot: bool,
    audit: MatchAudit,
    selection: Mapping[str, object],
) -> None:
    files = {f"topics/{p.name}": p for p in bank.files}
    files["topics/taxonomy.yaml"] = bank.taxonomy_file
    record_materials(folder, "topics", files)
    templates = {f"prompts/generate/{f.path.name}": f.path for f in families}
    if (prompts_dir / "system.txt").exists():
        templates["prompts/generate/system.txt"] = prompts_dir / "system.txt"
    record_materials(folder, "prompts", templates)
    record_section(
        folder,
        "generate",
        made_section(
            Generate,
            {
                "seed": seed,
                "pilot": pilot,
                "n_topics": len(bank.topics),
                "topic_selection": selection,
                "families": [f.name for f in families],
                "match_audit": audit.summary_dict(),
            },
            folder,
        ),
    )
    record_command(
        folder,
        "generate",
        {
            "seed": seed,
            "pilot": pilot,
            "topic_selection": {
                k: selection[k] for k in ("rule", "size", "seed") if k in selection
            },
        },
    )
