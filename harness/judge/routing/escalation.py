"""A later adjudication round: more adjudicators only for the sample items whose first ones
disagree (`harness judge --escalate`, plan `adjudication.escalate`).

With `combine: majority` of `per_item` adjudicators, the first `per_item // 2 + 1` settle every
item on which they agree: the others could not change its majority. So `judge --blind` routes
that many, and each later round adds, to every item whose assigned adjudicators have all
answered without a majority of `per_item`, as many adjudicators as the majority still needs: the
one with the most room in their capacity first, never one already on the item, never a person
already on another item of its topic when the routing keeps topics apart; ties broken by the
seed. The labels are those of `per_item` adjudicators for each item, at fewer judgments (2.18
per item instead of 3 at accuracy 0.9). A round reads only the adjudicators' verdicts of blinded
items, so it reveals nothing about the conditions; their packets of the round are written apart
(`packets/<reviewer>/round-<r>/`) and imported apart.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessError
from harness.judge.cutoff import stored_cutoff
from harness.judge.packets.packet_write import write_packets
from harness.study.clock import utc_now
from harness.study.lock import writes_study
from harness.study.manifest import made_section, read_manifest, record_section
from harness.study.manifest_sections import Adjudication, EscalationRound, Manifest
from harness.study.manifest_sections import Escalation as EscalationRecord
from harness.study.records import JsonObject
from harness.study.store import Study
from harness.study.tables.adjudication import (
    AdjudicatorVote,
    adjudicator_votes,
    coded_votes,
    escalation_due,
    needs,
    short_of_majority,
)
from harness.study.tables.assignments import (
    assignments_frame,
    insert_assignments,
    last_positions,
    last_round,
)
from harness.study.tables.reviewers import roster_rows
from harness.study.unblinding import unblinded_at

__all__ = ["Escalation", "escalate", "waiting_for_escalation"]


@dataclass
class Escalation:
    """What one `judge --escalate` did."""

    round_: int
    routed: dict[str, int] = field(default_factory=dict)  # item -> adjudicators added
    settled: int = 0  # items whose verdicts hold a majority
    waiting: int = 0  # items with an adjudicator's verdict outstanding
    exhausted: int = 0  # items without a majority that already have `per_item` adjudicators
    packets: list[Path] = field(default_factory=list)
    at: str | None = None  # when the round was recorded

    @property
    def assignments(self) -> int:
        return sum(self.routed.values())

    def summary(self) -> str:
        if not self.routed:
            head = "escalate: no item needs another adjudicator"
        else:
            head = (
                f"escalate: round {self.round_}, {len(self.routed)} item(s) the adjudicators "
                f"disagree on go to {self.assignments} more adjudicator(s)"
            )
        rest = f"{self.settled} settled, {self.waiting} waiting for a verdict"
        if self.exhausted:
            rest += f", {self.exhausted} without a majority of every adjudicator the plan allows"
        return f"{head} ({rest})"

    def record(self) -> JsonObject:
        return {
            "round": self.round_,
            "items": len(self.routed),
            "assignments": self.assignments,
            "settled": self.settled,
            "waiting": self.waiting,
            "exhausted": self.exhausted,
            "at": self.at,
        }


@writes_study
def escalate(study: Study, seed: int | None = None) -> Escalation:
    """Route the next round; refused when the study's plan does not escalate, and once
    `analyze` has unblinded it (a later round's verdicts could never be analysed)."""
    manifest = read_manifest(study)
    section, seed_ = _settings(study, manifest, seed)
    if (unblinded := unblinded_at(study)) is not None:
        raise HarnessError(
            f"the study was unblinded {unblinded} by harness analyze; a later "
            "adjudication round now could never enter the analysis",
            file=study.path,
        )
    per_item = section.per_item
    if per_item is None:  # `judge --blind` records it with `escalate`
        raise HarnessError("the manifest's adjudication has no per_item", file=study.path)
    result = Escalation(last_round(study) + 1)
    # how `unsure` counts, as `judge --blind` recorded it with the draw (`analyze` too)
    wanted = _wanted(
        study, per_item, section.unsure if section.unsure is not None else "not_novel", result
    )
    result.routed = wanted
    if wanted:
        routing = manifest.routing
        distinct = routing is None or routing.distinct_topics in (None, True)
        votes = adjudicator_votes(study)
        rows = _choose(study, votes, wanted, seed_ + result.round_, distinct)
        with study.transaction() as conn:
            insert_assignments(conn, rows, result.round_)
        result.packets = write_packets(
            study, made_at=utc_now(), cutoff=_cutoff(study), round_=result.round_
        )
        done = manifest.escalation.rounds if manifest.escalation else None
        result.at = utc_now()
        rounds = [*(done or []), made_section(EscalationRound, result.record(), study)]
        record_section(study.path, "escalation", EscalationRecord(rounds=rounds))
    return result


def waiting_for_escalation(study: Study) -> int:
    """Items a `judge --escalate` would route now (0 when the study does not escalate)."""
    return len(escalation_due(study, read_manifest(study).adjudication))


def _settings(study: Study, manifest: Manifest, seed: int | None) -> tuple[Adjudication, int]:
    section = manifest.adjudication
    if section is None or not section.escalate:
        raise HarnessError(
            "this study's adjudication does not escalate (plan adjudication.escalate: true with "
            "combine: majority, set before `harness judge --blind`)",
            file=study.path,
        )
    recorded = manifest.routing.seed if manifest.routing else None
    return section, int(seed if seed is not None else recorded if recorded is not None else 0)


def _cutoff(study: Study) -> str | None:
    return stored_cutoff(study)[1]


def _wanted(study: Study, per_item: int, unsure: str, result: Escalation) -> dict[str, int]:
    """Items to route now, counting the others into `result`."""
    wanted = {}
    for item, (votes, assigned) in coded_votes(study, unsure).items():
        more = needs(votes, assigned, per_item)
        if more is None:
            result.waiting += 1
        elif more:
            wanted[item] = more
        elif short_of_majority(votes, per_item) > 0:
            result.exhausted += 1
        else:
            result.settled += 1
    return wanted


def _choose(
    study: Study, votes: list[AdjudicatorVote], wanted: dict[str, int], seed: int, distinct: bool
) -> list[tuple[str, str, int]]:
    """(item, adjudicator, position) rows: most room first, ties by the seed."""
    rng = random.Random(seed)
    people = {r.reviewer_id: r for r in roster_rows(study) if r.role == "adjudicator"}
    load = Counter(_all_assigned(study))
    on_item: dict[str, set[str]] = defaultdict(set)
    topic_of: dict[str, str] = {}
    on_topic: dict[str, set[str]] = defaultdict(set)
    for v in votes:
        on_item[v.item_id].add(v.reviewer_id)
        topic_of[v.item_id] = v.topic_id
        on_topic[v.topic_id].add(v.reviewer_id)
    position = last_positions(study)
    rows = []
    for item in sorted(wanted):
        for _ in range(wanted[item]):
            free = [
                r
                for r in people.values()
                if r.reviewer_id not in on_item[item]
                and load[r.reviewer_id] < r.capacity
                and not (
                    distinct and r.kind == "human" and r.reviewer_id in on_topic[topic_of[item]]
                )
            ]
            if not free:
                raise HarnessError(
                    f"no adjudicator is free for item {item} (each is on it already, on its "
                    "topic, or at capacity), and the roster is fixed once routed: analyze with "
                    "--partial, recorded as a deviation",
                    column="capacity",
                )
            rng.shuffle(free)
            best = max(free, key=lambda r: r.capacity - load[r.reviewer_id])
            who = best.reviewer_id
            load[who] += 1
            on_item[item].add(who)
            on_topic[topic_of[item]].add(who)
            position[who] = position.get(who, 0) + 1
            rows.append((item, who, position[who]))
    return rows


def _all_assigned(study: Study) -> list[str]:
    return [str(r) for r in assignments_frame(study).reviewer_id]
