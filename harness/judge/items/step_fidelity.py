"""Fidelity of a blinded step: does the text a step wrote say what the output said, and no more?

Reviewers judge what the extraction and normalisation steps wrote, so a step that drops the
output's content, adds a claim of novelty or of prior work, or repeats its own instruction changes
the measurement. Three checks, each cheap and explainable, compare the step's text with the output
it was made from:

- support: the share of the step text's content words (stems) found in the output; words of the
  step's own instruction (\"core\", \"combination\", \"purpose\") do not count either way;
- added claims: a class of claim (novelty, prior work, an institution) the step text makes while
  the output has no word of that class;
- echo: a run of five words from the instruction that the step text repeats and the output lacks.

An item whose step fails is shown to reviewers in its original form for that step
(`blinded_items`), and the report compares failure rates between conditions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness.judge import judge_defaults as D
from harness.study.records import JsonObject

__all__ = ["CLAIM_CLASSES", "Fidelity", "check", "content_stems"]

_WORD = re.compile(r"[a-z][a-z'-]*")
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}", re.S)

#: Words that carry no content of their own (function words, and verbs every summary uses).
_STOP_WORDS = """
about above after again against also among another because been before being between both came
come could does doing done down each either else even every from further have having here into
itself just like made make many more most much must need only other over same should some such
than that their them then there these they this those through thus under until upon very what
when where which while whom whose will with within without would your yours using used uses
based idea ideas research
"""
_STOP = frozenset(_STOP_WORDS.split())

#: Claims a step must not add: a class counts as added when the step text has one of its
#: phrases and the output none of them.
CLAIM_CLASSES: dict[str, tuple[str, ...]] = {
    "novelty": (
        "novel", "new", "newly", "the first", "for the first time", "unprecedented",
        "groundbreaking", "ground-breaking", "pioneering", "innovative", "unexplored", "never been",
    ),
    "prior work": (
        "well-established", "well established", "extensively", "widely studied", "widely known",
        "prior work", "previous work", "prior research", "previous research", "previous studies",
        "prior studies", "literature", "has been studied", "has been researched",
        "has been shown", "been published", "published", "well known", "well-known",
    ),
    "institution": ("university", "institute", "laboratory", "college"),
}  # fmt: skip


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _stem(word: str) -> str:
    """A prefix stem: inflections and derivations share their first letters (combine, combining,
    combination -> combi), which is all a containment check needs."""
    return word.strip("'-")[: D.FIDELITY_STEM_CHARS]


def content_stems(text: str) -> set[str]:
    """Stems of the content words (at least four letters, not a function word) of `text`."""
    return {_stem(w) for w in _words(text) if len(w) >= 4 and w not in _STOP}


def _has_phrase(words: list[str], phrase: str) -> bool:
    target = phrase.split()
    n = len(target)
    return any(words[i : i + n] == target for i in range(len(words) - n + 1))


@lru_cache(maxsize=8)
def _instruction(template: Path) -> tuple[frozenset[str], tuple[tuple[str, ...], ...]]:
    """The step's instruction (its template without the placeholder): its content stems, and its
    runs of ECHO_WORDS words."""
    words = _words(_PLACEHOLDER.sub(" ", template.read_text(encoding="utf-8")))
    n = D.FIDELITY_ECHO_WORDS
    shingles = tuple(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return frozenset(content_stems(" ".join(words))), shingles


@dataclass(frozen=True)
class Fidelity:
    """One step text checked against its output."""

    support: float  # share of the step text's content stems found in the output (1.0 if none)
    added: tuple[str, ...]  # claim classes the step text adds
    echoed: bool  # repeats five words of its instruction that the output does not have

    @property
    def passed(self) -> bool:
        return self.support >= D.FIDELITY_MIN_SUPPORT and not self.added and not self.echoed

    @property
    def reasons(self) -> list[str]:
        out = []
        if self.support < D.FIDELITY_MIN_SUPPORT:
            out.append(f"support {self.support:.2f} < {D.FIDELITY_MIN_SUPPORT:.2f}")
        out += [f"adds {name}" for name in self.added]
        if self.echoed:
            out.append("echoes the instruction")
        return out

    def record(self) -> JsonObject:
        return {
            "passed": self.passed,
            "support": round(self.support, 4),
            "min_support": D.FIDELITY_MIN_SUPPORT,
            "added": list(self.added),
            "echoed": self.echoed,
        }


def check(step_text: str, original: str, template: Path) -> Fidelity:
    """Check a step's text against the output text it was made from, with the step's template."""
    instruction, shingles = _instruction(template)
    source = content_stems(original)
    said = content_stems(step_text) - (instruction - source)
    support = len(said & source) / len(said) if said else 1.0
    step_words, source_words = _words(step_text), _words(original)
    added = tuple(
        name
        for name, phrases in CLAIM_CLASSES.items()
        if any(_has_phrase(step_words, p) for p in phrases)
        and not any(_has_phrase(source_words, p) for p in phrases)
    )
    n = D.FIDELITY_ECHO_WORDS
    step_runs = {tuple(step_words[i : i + n]) for i in range(len(step_words) - n + 1)}
    source_runs = {tuple(source_words[i : i + n]) for i in range(len(source_words) - n + 1)}
    echoed = any(s in step_runs and s not in source_runs for s in shingles)
    return Fidelity(support, added, echoed)
