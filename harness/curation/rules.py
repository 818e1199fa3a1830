"""The curation rules as numbers, and the shapes of what a check finds.

The defaults are the rules written at the top of topics/bank.yaml; a curator may tighten or
loosen them from the command line, and the report always states the values it used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: A bank of this size must have at least TARGET_FIELD_PAIRS distinct field pairs; smaller banks
#: need the same ratio, so a growing bank is held to the target on the way there.
TARGET_TOPICS = 360
TARGET_FIELD_PAIRS = 150


@dataclass(frozen=True)
class Rules:
    # The first 94 bundled topics reach at most 0.50 (topics) and 0.74 (concepts, "change
    # blindness" / "inattentional blindness"): distinct ideas stay well below these.
    near_duplicate_topic: float = 0.80  # cosine similarity of two topics' four concepts
    near_duplicate_concept: float = 0.85  # cosine similarity of two concepts of different topics
    # Longest minus shortest prompt of a topic, in tokens: over `warn` is reported, over `max`
    # fails (the bundled bank's worst topic, kept unchanged for the demo, is 24 apart).
    warn_token_range: int = 8
    max_token_range: int = 24
    max_mean_token_diff: float = 1.0  # |mean paired cross - single| over the bank
    concept_words: tuple[int, int] = (2, 4)
    max_field_share: float = 0.08  # of all topics, for the field used most
    field_cap_floor: int = 12  # small banks may use a field this often regardless
    field_pairs_per_topic: float = TARGET_FIELD_PAIRS / TARGET_TOPICS
    cutoffs: tuple[int, ...] = (2015, 2020, 2024)

    def max_field_topics(self, n_topics: int) -> int:
        """Most topics one field may appear in: the share, but never below the floor (a bank of
        94 topics averages 7.2 topics per field, so 8% of it could not be met by any bank)."""
        return max(math.floor(self.max_field_share * n_topics), self.field_cap_floor)

    def min_field_pairs(self, n_topics: int) -> int:
        """Distinct field pairs needed: the target's ratio (150 per 360 topics), at most 150."""
        return min(TARGET_FIELD_PAIRS, math.ceil(self.field_pairs_per_topic * n_topics - 1e-9))

    def as_dict(self) -> dict[str, Any]:
        return {
            "near_duplicate_topic": self.near_duplicate_topic,
            "near_duplicate_concept": self.near_duplicate_concept,
            "warn_token_range": self.warn_token_range,
            "max_token_range": self.max_token_range,
            "max_mean_token_diff": self.max_mean_token_diff,
            "concept_words": list(self.concept_words),
            "max_field_share": self.max_field_share,
            "field_cap_floor": self.field_cap_floor,
            "field_pairs_per_topic": round(self.field_pairs_per_topic, 4),
            "cutoffs": list(self.cutoffs),
        }


@dataclass(frozen=True)
class Finding:
    """One rule broken, at a place in a bank file where there is one."""

    message: str
    topic_id: str | None = None
    file: Path | None = None
    line: int | None = None

    def __str__(self) -> str:
        place = f"{self.file}:{self.line}: " if self.file and self.line else ""
        who = f"topic {self.topic_id}: " if self.topic_id else ""
        return f"{place}{who}{self.message}"


@dataclass
class Section:
    """One check: its figures (for the report and JSON) and what failed."""

    name: str
    summary: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)  # reported, but the check passes
    stats: dict[str, object] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.findings
