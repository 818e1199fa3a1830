"""The match audit: are the prompts of a topic alike in everything but the concepts' origin?

Token counts come from the embedded model's tokenizer. Structure: with every slot's text masked,
the three prompts of a topic must be identical, use each slot once, and share one family.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import mean, pstdev

from harness.study.tables.prompts import PromptRecord


@dataclass
class MatchAudit:
    n_topics: int
    tokens_mean: dict[str, float]
    diff: dict[str, dict[str, float]]  # "cross-single_a" -> mean, sd, max_abs
    worst_topic: str
    worst_range: int  # max - min tokens within that topic
    structure_failures: list[str] = field(default_factory=list)

    @property
    def structure_ok(self) -> bool:
        return not self.structure_failures

    def summary_dict(self) -> dict[str, object]:
        return {
            "n_topics": self.n_topics,
            "tokens_mean": self.tokens_mean,
            "paired_diff": self.diff,
            "worst_topic": self.worst_topic,
            "worst_range_tokens": self.worst_range,
            "structure_ok": self.structure_ok,
            "structure_failures": self.structure_failures,
        }


def _masked(p: PromptRecord) -> str:
    text = p.text
    for start, end in sorted(p.span_map().values(), reverse=True):
        text = text[:start] + "<>" + text[end:]
    return text


def audit_prompts(prompts: Sequence[PromptRecord]) -> MatchAudit:
    by_topic: dict[str, dict[str, PromptRecord]] = defaultdict(dict)
    for p in prompts:
        by_topic[p.topic_id][p.condition] = p
    failures = []
    for tid, conds in by_topic.items():
        if set(conds) != {"single_a", "single_b", "cross"}:
            failures.append(f"{tid}: conditions {sorted(conds)}")
            continue
        if len({_masked(p) for p in conds.values()}) != 1:
            failures.append(f"{tid}: wording differs outside the concept slots")
        if len({p.family for p in conds.values()}) != 1:
            failures.append(f"{tid}: conditions use different template families")
    complete = {t: c for t, c in by_topic.items() if len(c) == 3}
    conditions = ("single_a", "single_b", "cross")
    tokens = {c: [complete[t][c].n_tokens for t in complete] for c in conditions}
    diff = {}
    for other in ("single_a", "single_b"):
        d = [x - y for x, y in zip(tokens["cross"], tokens[other], strict=True)]
        diff[f"cross-{other}"] = {
            "mean": round(mean(d), 3),
            "sd": round(pstdev(d), 3),
            "max_abs": max(abs(x) for x in d),
        }
    ranges = {
        t: max(p.n_tokens for p in c.values()) - min(p.n_tokens for p in c.values())
        for t, c in complete.items()
    }
    worst = max(sorted(ranges), key=lambda t: ranges[t])
    return MatchAudit(
        n_topics=len(by_topic),
        tokens_mean={c: round(mean(v), 2) for c, v in tokens.items()},
        diff=diff,
        worst_topic=worst,
        worst_range=ranges[worst],
        structure_failures=failures,
    )
