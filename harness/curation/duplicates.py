"""Near-duplicate topics and concepts, by cosine similarity under the offline MiniLM model."""

from __future__ import annotations

from typing import Any

from harness.curation.entries import Located
from harness.curation.rules import Rules, Section
from harness.literature.embedding import encode
from harness.materials.topics import Topic


def topic_text(topic: Topic) -> str:
    """What a topic is about: its four concepts (fields and relation repeat across topics)."""
    return ", ".join([*topic.concepts_a, *topic.concepts_b])


def similar_pairs(
    vectors: Any, owners: list[int], threshold: float
) -> list[tuple[int, int, float]]:
    """Index pairs (i < j) of different owners whose cosine similarity is >= threshold."""
    import numpy as np

    sims = vectors @ vectors.T
    same = np.equal.outer(owners, owners)
    upper = np.triu(np.ones_like(sims, dtype=bool), k=1)
    hits = np.argwhere((sims >= threshold) & upper & ~same)
    return [(int(i), int(j), round(float(sims[i, j]), 3)) for i, j in hits]


def check_duplicates(located: list[Located], rules: Rules) -> tuple[Section, Section]:
    topics = Section("near-duplicate topics")
    concepts = Section("near-duplicate concepts")
    texts = [topic_text(x.topic) for x in located]
    names = [
        (k, c) for k, x in enumerate(located) for c in [*x.topic.concepts_a, *x.topic.concepts_b]
    ]
    vectors = encode(texts + [c for _, c in names])
    tvec, cvec = vectors[: len(texts)], vectors[len(texts) :]
    for i, j, sim in similar_pairs(tvec, list(range(len(texts))), rules.near_duplicate_topic):
        topics.findings.append(
            located[j].finding(f"near duplicate of topic {located[i].topic.id} (cosine {sim:.3f})")
        )
    for i, j, sim in similar_pairs(cvec, [k for k, _ in names], rules.near_duplicate_concept):
        (ki, ci), (kj, cj) = names[i], names[j]
        concepts.findings.append(
            located[kj].finding(
                f"concept {cj!r} is a near duplicate of {ci!r} in topic {located[ki].topic.id} "
                f"(cosine {sim:.3f})"
            )
        )
    topics.summary.append(
        f"threshold cosine >= {rules.near_duplicate_topic} over the four "
        f"concepts of each topic (all-MiniLM-L6-v2): "
        f"{len(topics.findings)} pair(s)"
    )
    concepts.summary.append(
        f"threshold cosine >= {rules.near_duplicate_concept} between "
        f"concepts of different topics: {len(concepts.findings)} pair(s)"
    )
    topics.stats = {"threshold": rules.near_duplicate_topic, "pairs": len(topics.findings)}
    concepts.stats = {"threshold": rules.near_duplicate_concept, "pairs": len(concepts.findings)}
    return topics, concepts
