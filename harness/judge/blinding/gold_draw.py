"""The gold (adjudication) subsample on the judge side: the draw, its checks and its routing.

At `judge --blind`, before any routing, topics are drawn with the plan's `adjudication.seed`;
every item of a drawn topic (all conditions, all models) goes to `per_item` adjudicators, and to
the primary reviewers like every other item. Adjudicators get planted control items too, by the
primary reviewers' rules (`blind_stage._route_with_controls`), so that their accuracy is
measured like everyone's. The draw is stored with the routing in one transaction and sealed in
the blinding key (`harness.study.blinding`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.analysis.plan.plan_file import load_plan
from harness.errors import HarnessError
from harness.judge.controls.control_routing import reserved_roster
from harness.judge.routing.roster import store_roster
from harness.judge.routing.route_items import (
    RoutingResult,
    balance_table,
    check_feasible,
    check_routing,
    plan_routing,
)
from harness.study.records import JsonObject
from harness.study.store import Study
from harness.study.tables.adjudication import store_sample
from harness.study.tables.assignments import insert_assignments
from harness.study.tables.items import control_item_ids
from harness.study.tables.judge_reads import routing_items
from harness.study.tables.topics import topic_frame

if TYPE_CHECKING:
    import pandas as pd

    from harness.analysis.plan.plan_file import Adjudication
    from harness.judge.controls.control_plan import ControlSettings
    from harness.judge.routing.roster import Roster
    from harness.judge.routing.route_items import RoutingResult

METHOD = (
    "systematic sampling over the topics ordered by stratum (strata in a seeded random order, "
    "topics shuffled within each stratum, random start, step N/n): every topic has inclusion "
    "probability n/N; each stratum gets its proportional share +-1"
)


@dataclass(frozen=True)
class Draw:
    """The drawn topics (topic_id, stratum) and the plan section they were drawn with."""

    plan: Adjudication
    rows: list[tuple[str, str]]
    n_topics: int  # topics with items, the population drawn from

    def manifest_section(self) -> JsonObject:
        strata: dict[str, int] = {}
        for _, stratum in self.rows:
            strata[stratum] = strata.get(stratum, 0) + 1
        return {
            "seed": self.plan.seed,
            "topics": self.plan.topics,
            "size": len(self.rows),
            "population": self.n_topics,
            "stratify": self.plan.stratify,
            "per_item": self.plan.per_item,
            "escalate": self.plan.escalate,
            "strata": dict(sorted(strata.items())),
            "method": METHOD,
        }


def plan_section(plan_path: str, roster: Roster) -> Adjudication | None:
    """The plan's `adjudication:` section when the study draws a sample, None when it does not;
    refused when the plan and the roster disagree about having adjudicators."""

    section = load_plan(plan_path).plan.adjudication
    adjudicators = roster.with_role("adjudicator").reviewers
    if section.enabled and not adjudicators:
        raise HarnessError(
            f"the analysis plan asks for an adjudicated sample (adjudication.topics: "
            f"{section.topics}) but the roster has no reviewer with role: adjudicator "
            "(add adjudicators, or set adjudication.topics: 0 for a provisional verdict)",
            file=plan_path,
            column="adjudication.topics",
        )
    if adjudicators and not section.enabled:
        raise HarnessError(
            f"the roster has {len(adjudicators)} adjudicator(s) but the analysis plan "
            "disables adjudication (adjudication.topics: 0)",
            file=plan_path,
            column="adjudication.topics",
        )
    return section if section.enabled else None


def draw_sample(study: Study, plan: Adjudication) -> Draw:
    """Draw `plan.size(N)` of the N topics that have items (reproducible from the seed)."""

    with_items = set(routing_items(study).topic_id)
    frame = topic_frame(study)
    strata = {
        t: (" x ".join(sorted((a, b))) if plan.stratify == "domain_pair" else "all")
        for t, a, b in zip(frame.topic_id, frame.domain_a, frame.domain_b, strict=True)
        if t in with_items
    }
    chosen = systematic_draw(strata, plan.size(len(strata)), plan.seed)
    return Draw(plan, sorted((t, strata[t]) for t in chosen), len(strata))


def systematic_draw(strata: dict[str, str], size: int, seed: int) -> list[str]:
    """`size` of the keys of `strata` (topic -> stratum), by systematic sampling.

    Equal inclusion probabilities are what the analysis relies on (its estimators treat the
    sample as a simple random sample of topics): with start u uniform on {0, ..., N-1}, topic
    at place i of the ordered list is drawn iff some j has i*n <= u + j*N < (i+1)*n, and the n
    integers of that window fall in distinct residues mod N, so P(drawn) = n/N exactly. Strata
    are contiguous blocks of the list, so each gets floor or ceil of its proportional share.
    """
    if size <= 0:
        return []
    rng = random.Random(seed)
    groups: dict[str, list[str]] = {}
    for topic in sorted(strata):  # a fixed order first: the result depends on the seed only
        groups.setdefault(strata[topic], []).append(topic)
    order = sorted(groups)
    rng.shuffle(order)
    listed: list[str] = []
    for stratum in order:
        members = groups[stratum]
        rng.shuffle(members)
        listed.extend(members)
    n_all = len(listed)
    start = rng.randrange(n_all)
    # integer arithmetic: positions (start + j N) / n, so no rounding moves a boundary
    return [listed[(start + j * n_all) // size] for j in range(size)]


def check_tiers(
    study: Study,
    roster: Roster,
    plan: Adjudication | None,
    *,
    k: int,
    distinct_topics: bool,
    controls: ControlSettings | None = None,
) -> None:
    """Both routings are feasible (before any model runs): primaries over every item, and
    adjudicators over the sample's items with `per_item` each (with `escalate` too: any item may
    need them all, and the roster is fixed once routed). With `controls` (the study plants
    control items), the adjudicators' capacity must also keep room for their controls (about
    `share` x their items, at least `min_per_reviewer`; `control_routing.reserved_roster`):
    without them the adjudicators' accuracy could not be measured."""

    check_routing(study, roster.with_role("primary"), k=k, distinct_topics=distinct_topics)
    if plan is None:
        return
    draw = draw_sample(study, plan)
    items = sample_items(study, draw)
    adjudicators = sorted(roster.with_role("adjudicator").reviewers, key=lambda r: r.id)
    said = (
        f"adjudication: {len(draw.rows)} drawn topics with {len(items)} items, "
        f"adjudication.per_item={plan.per_item}"
        + (f" ({plan.first_round} first, escalate)" if plan.escalate else "")
        + f", {len(adjudicators)} adjudicator(s)"
    )
    try:
        check_feasible(items, adjudicators, plan.per_item, distinct_topics)
    except HarnessError as error:  # the same checks, said of the sample and its adjudicators
        raise HarnessError(f"{said}: {error.message}", column="adjudication.per_item") from None
    if controls is None:
        return
    adjudicators_only = roster.with_role("adjudicator")
    share = controls.share_for(adjudicators_only)
    kept = reserved_roster(adjudicators_only, share, controls.min_per_reviewer)
    reserved = sorted(kept.reviewers, key=lambda r: r.id)
    try:
        check_feasible(items, reserved, plan.per_item, distinct_topics)
    except HarnessError as error:
        raise HarnessError(
            f"{said}, with room kept for their control items (about {share:g} x "
            f"their items, at least {controls.min_per_reviewer} each; plan `controls:`): "
            f"{error.message}; raise the adjudicators' capacity or add adjudicators",
            column="capacity",
        ) from None


def sample_items(study: Study, draw: Draw) -> pd.DataFrame:
    """The routing items (`judge_reads.routing_items`) of the drawn topics."""

    items = routing_items(study)
    drawn = {topic for topic, _ in draw.rows}
    return items[items.topic_id.isin(drawn)].reset_index(drop=True)


def route_sample(
    study: Study, adjudicators: Roster, plan: Adjudication, draw: Draw, *, seed: int, distinct: bool
) -> RoutingResult:
    """The sample's items to `per_item` adjudicators each (positions of their own routing)."""

    return plan_routing(
        study,
        adjudicators,
        k=plan.first_round,
        seed=seed,
        distinct_topics=distinct,
        items=sample_items(study, draw),
    )


def store_tiers(
    study: Study,
    roster: Roster,
    primary: RoutingResult,
    plan: Adjudication | None,
    sample: tuple[Draw, pd.DataFrame] | None = None,
) -> tuple[RoutingResult, Draw | None]:
    """Store the roster, both assignments and the draw (routing and sample in one
    transaction). `sample`: the draw and the adjudicators' assignment (their sample items and
    their controls, `blind_stage._route_with_controls`); without it the sample's items are
    routed to the adjudicators here. Adjudicators and primary reviewers are distinct people, so
    each keeps the positions of its own routing."""
    import pandas as pd

    assignments, draw = primary.assignments, None
    if plan is not None:
        if sample is None:
            draw = draw_sample(study, plan)
            adjudicators = roster.with_role("adjudicator")
            gold = route_sample(
                study,
                adjudicators,
                plan,
                draw,
                seed=primary.seed,
                distinct=primary.distinct_topics,
            ).assignments
        else:
            draw, gold = sample
        columns = ["item_id", "reviewer_id", "position"]
        assignments = pd.concat([assignments[columns], gold[columns]], ignore_index=True)
    reviewers = sorted(roster.reviewers, key=lambda r: r.id)
    balance = balance_table(routing_items(study), assignments, reviewers)
    result = RoutingResult(
        assignments,
        balance,
        primary.seed,
        primary.k,
        primary.distinct_topics,
        primary.solver,
        routing_parts(study, roster, assignments),
    )
    store_roster(study, roster)
    with study.transaction() as conn:
        insert_assignments(
            conn, assignments[["item_id", "reviewer_id", "position"]].itertuples(index=False)
        )
        if draw is not None:
            store_sample(conn, draw.rows)
    return result, draw


def routing_parts(study: Study, roster: Roster, assignments: pd.DataFrame) -> dict[str, int]:
    """The primary reviewers' real items and their assignments, the control items' assignments
    (both tiers) and the adjudicators' assignments of real items: they add up to the total."""

    controls = set(control_item_ids(study))
    adjudicators = {r.id for r in roster.with_role("adjudicator").reviewers}
    is_control = assignments.item_id.isin(controls)
    by_adjudicator = assignments.reviewer_id.isin(adjudicators)
    real = assignments[~is_control & ~by_adjudicator]
    return {
        "real_items": int(real.item_id.nunique()),
        "real_assignments": len(real),
        "control_items": int(assignments[is_control].item_id.nunique()),
        "control_assignments": int(is_control.sum()),
        "adjudicator_assignments": int((~is_control & by_adjudicator).sum()),
    }


def summary(draw: Draw) -> str:
    """One line for `judge --blind` (counts only: which topics stays sealed)."""
    return (
        f"adjudication: {len(draw.rows)} of {draw.n_topics} topics drawn (seed "
        f"{draw.plan.seed}, stratified by {draw.plan.stratify}); their items go to "
        + (
            f"{draw.plan.first_round} adjudicators each, more where theirs disagree "
            "(`harness judge --escalate`)"
            if draw.plan.escalate
            else f"{draw.plan.per_item} adjudicators each"
        )
    )
