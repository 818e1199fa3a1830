"""What every automated reviewer method is: a `Reviewer` and the `ReviewerMethod` record that
names it, says what it needs and builds it.

A reviewer first `assess`es an item (searches and a score), then the `Assessment` `decide`s at a
threshold, so calibration scores each control once and tries every threshold. Optional
capabilities are class attributes with a default (as Inspect AI's `ModelAPI` declares them):
`reads_full_text` (the item's text beside its core combination) and `meter` (a reviewer that
calls a model counts its replies, and `judge --auto` records them).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from harness.literature.base import SearchRecord, Source

if TYPE_CHECKING:
    from harness.models.providers import ModelSpec
    from harness.models.throughput import Meter

#: Values a review's notes hold (written as JSON with the review).
Notes = dict[str, object]


@dataclass
class Search:
    """One search made for a review, with the ids the reviewer marked relevant."""

    record: SearchRecord
    relevant: list[str] = field(default_factory=list)


@dataclass
class Decision:
    verdict: str  # published | not_published | unsure
    confidence: int | None
    prior_work: str | None
    notes: Notes
    searches: list[Search]

    def notes_json(self) -> str:
        return json.dumps(self.notes, ensure_ascii=False, sort_keys=True)


class Assessment(Protocol):
    """One item assessed: a score (None: no verdict to threshold) and the verdict without one."""

    @property
    def score(self) -> float | None: ...

    @property
    def otherwise(self) -> str: ...

    def decide(self, threshold: float) -> Decision: ...


class Reviewer(ABC):
    """An automated reviewer: item text in, `Assessment` out; `review` decides at `threshold`."""

    #: True: reads the item's text beside its core combination (else the combination alone).
    reads_full_text: ClassVar[bool] = False
    #: The decision rule's threshold (the settled rule sets it before reviewing).
    threshold: float = 0.0
    #: Not None: the reviewer calls a model, and `judge --auto` records its decoding.
    meter: Meter | None = None

    @abstractmethod
    def assess(self, text: str, stop_at: float | None = None) -> Assessment:
        """Search and score; a reviewer may stop once a score reaches `stop_at` (None: never)."""

    def review(self, text: str) -> Decision:
        return self.assess(text, stop_at=self.threshold).decide(self.threshold)


@dataclass(frozen=True)
class ReviewerContext:
    """What `judge --auto` hands a method's `build`: the run's sources and settings."""

    reviewer_id: str
    method: str  # as the roster spells it (`llm:openai/gpt-4o-mini`)
    argument: str  # what follows `NAME:` ("" for a method without one)
    open_sources: Callable[[bool], list[Source]]  # True: the local corpus re-ranked densely
    cutoff: str | None
    max_queries: int
    threshold: float  # the method's default; the settled rule replaces it
    model: ModelSpec | None = None  # the resolved model of a method that `needs_model`
    #: keyword options of an OpenAI-compatible backend (`base_url`, `concurrency`, ...)
    server: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReviewerMethod:
    """One automated reviewer method, as the roster, calibration and `judge --auto` read it."""

    name: str  # the roster's `method:` (before `:` for a method with an argument)
    label: str  # what the score is, in a few words
    rule: str  # how the threshold turns a score into a verdict (recorded with the rule)
    default_threshold: float
    build: Callable[[ReviewerContext], Reviewer]
    #: what follows `NAME:` in the roster (`MODEL` for `llm:MODEL`); None: no argument
    argument: str | None = None
    #: the argument is a model (a provider string), resolved before anything runs
    needs_model: bool = False
    #: `--threshold` may fix the threshold (else it is only calibrated)
    user_threshold: bool = True

    @property
    def usage(self) -> str:
        """How a roster spells it: `retrieval`, `llm:MODEL`."""
        return f"{self.name}:{self.argument}" if self.argument else self.name
