"""Routing of control items, after the real items: the planned number for every reviewer.

Controls are routed like real items: k distinct reviewers each where capacity allows, capacity
counted together with the real items, and a human reviewer never sees two items (real or control)
of one topic. Soft goals: each reviewer's planned number of controls (about `share` x the
reviewer's real items, at least `min_per_reviewer`), then published and unpublished controls, and
cross- and single-field ones, in the proportions of all controls within each reviewer's share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.judge.judge_defaults import ROUTING_TIME_LIMIT
from harness.judge.routing.milp_solve import solve_milp
from harness.judge.routing.roster import Reviewer, Roster
from harness.judge.routing.route_items import (
    MIP_GAP,
    W_NOISE,
    ConstraintRows,
    per_topic_limit,
    shuffled_positions,
)
from harness.progress import status
from harness.study.store import Study
from harness.study.tables.controls import control_items_frame
from harness.study.tables.judge_reads import routing_items

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

W_COVER, W_UNDER, W_OVER, W_MIX = 10.0, 20.0, 1.0, 1.0


def reserved_roster(roster: Roster, share: float, minimum: int) -> Roster:
    """The roster with room kept for controls: real items r_i with r_i + max(minimum,
    share * r_i) <= capacity."""
    kept = [
        r.model_copy(
            update={"capacity": max(1, min(r.capacity - minimum, int(r.capacity / (1 + share))))}
        )
        for r in roster.reviewers
    ]
    return Roster(reviewers=kept)


def route_controls(
    study: Study,
    roster: Roster,
    real: pd.DataFrame,
    wanted: dict[str, int],
    *,
    k: int,
    seed: int,
    distinct_topics: bool,
) -> pd.DataFrame:
    """DataFrame (item_id, reviewer_id) of the control items; `real` the real assignment."""
    controls = control_items_frame(study)
    with status(f"routing {len(controls)} control items to {len(roster.reviewers)} reviewers"):
        return _route_controls(study, roster, real, wanted, controls, k, seed, distinct_topics)


def _route_controls(
    study: Study,
    roster: Roster,
    real: pd.DataFrame,
    wanted: dict[str, int],
    controls: pd.DataFrame,
    k: int,
    seed: int,
    distinct_topics: bool,
) -> pd.DataFrame:
    import pandas as pd

    if controls.empty:
        return pd.DataFrame(columns=["item_id", "reviewer_id"])
    reviewers = sorted(roster.reviewers, key=lambda r: r.id)
    topics = real.merge(routing_items(study)[["item_id", "topic_id"]], on="item_id")
    seen = {str(r): set(g.topic_id) for r, g in topics.groupby("reviewer_id")}  # ids: text already
    used = real.reviewer_id.value_counts().to_dict()
    room = {r.id: max(0, r.capacity - used.get(r.id, 0)) for r in reviewers}
    chosen = _solve(controls, reviewers, room, wanted, seen, k, seed, distinct_topics)
    return pd.DataFrame(
        [(controls.item_id.iat[c], reviewers[r].id) for c, r in chosen],
        columns=["item_id", "reviewer_id"],
    )


def _solve(
    controls: pd.DataFrame,
    reviewers: list[Reviewer],
    room: dict[str, int],
    wanted: dict[str, int],
    seen: dict[str, set[str]],
    k: int,
    seed: int,
    distinct: bool,
) -> list[tuple[int, int]]:
    """Variables x[c, r] in {0, 1}, then per reviewer: under, over, and the two mix deviations."""
    import numpy as np
    from scipy.optimize import Bounds

    n_c, n_r = len(controls), len(reviewers)
    n_x = n_c * n_r
    under, over, mix = n_x, n_x + n_r, n_x + 2 * n_r  # offsets of the per-reviewer variables
    n_vars = n_x + 4 * n_r
    rng = np.random.default_rng([seed, 2])
    cost = np.concatenate(
        [
            -W_COVER + W_NOISE * rng.random(n_x),
            np.full(n_r, W_UNDER),
            np.full(n_r, W_OVER),
            np.full(2 * n_r, W_MIX),
        ]
    )
    upper = np.concatenate([np.ones(n_x), np.full(4 * n_r, np.inf)])
    rows = ConstraintRows()
    for c in range(n_c):
        rows.add(c * n_r + np.arange(n_r), np.ones(n_r), 0, k)
    published = (controls.expected == "published").to_numpy(float)
    cross = (controls.kind == "cross").to_numpy(float)
    topic = controls.topic_id.to_numpy()
    for r, rv in enumerate(reviewers):
        column = np.arange(n_c) * n_r + r
        ones = np.ones(n_c)
        rows.add(column, ones, 0, room[rv.id])
        target = wanted.get(rv.id, 0)
        rows.add(np.append(column, under + r), np.append(ones, 1.0), target, np.inf)
        rows.add(np.append(column, over + r), np.append(ones, -1.0), -np.inf, target)
        for j, flags in enumerate((published, cross)):
            diff = flags - flags.mean()
            cols = np.append(column, mix + 2 * r + j)
            rows.add(cols, np.append(diff, -1.0), -np.inf, 0)
            rows.add(cols, np.append(-diff, -1.0), -np.inf, 0)
        if per_topic_limit(rv, distinct):
            _topic_rule(rows, upper, topic, seen.get(rv.id, set()), r, n_r)
    integrality = np.concatenate([np.ones(n_x), np.zeros(4 * n_r)])
    res = solve_milp(
        cost,
        integrality=integrality,
        bounds=Bounds(np.zeros(n_vars), upper),
        constraints=rows.constraint(n_vars),
        options={"time_limit": ROUTING_TIME_LIMIT, "mip_rel_gap": MIP_GAP},
    )
    if res.x is None:  # all constraints are <= or soft, so x = 0 is always feasible
        return []
    solution = res.x[:n_x].reshape(n_c, n_r) > 0.5
    return [(int(c), int(r)) for c, r in zip(*np.nonzero(solution), strict=True)]


def _topic_rule(
    rows: ConstraintRows, upper: np.ndarray, topic: np.ndarray, seen: set[str], r: int, n_r: int
) -> None:
    """A human reviewer: no control of a topic already seen, at most one control per topic."""
    import numpy as np

    groups: dict[str, list[int]] = {}
    for c, t in enumerate(topic):
        if t is None or t != t:  # controls from a file belong to no topic
            continue
        if t in seen:
            upper[c * n_r + r] = 0
        groups.setdefault(t, []).append(c)
    for members in groups.values():
        if len(members) > 1:
            rows.add(np.array(members) * n_r + r, np.ones(len(members)), 0, 1)


def merged_positions(
    real: pd.DataFrame, controls: pd.DataFrame, keys: dict[str, str], seed: int
) -> pd.DataFrame:
    """Each reviewer's real and control items together in one seeded random order.

    Ranks come from the stable keys (output ids, control ids), not the random item ids.
    """
    import pandas as pd

    both = pd.concat([real[["item_id", "reviewer_id"]], controls], ignore_index=True)
    return shuffled_positions(both, both.item_id.map(keys), seed)
