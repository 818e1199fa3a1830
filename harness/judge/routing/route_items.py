"""Routing: each item to k distinct reviewers, solved exactly as a small integer programme.

Hard constraints: k distinct reviewers per item; capacity; a human reviewer sees at most one item
per topic (automated reviewers judge each item in a fresh context, so the rule does not bind
them). Soft goals, in order of weight: conditions (and, in a study of several models, the
models, within one item) balanced within each reviewer's share (in the proportions of
the whole study), expertise overlapping the topic's fields, then seeded random
tie-breaking, so that the same items, roster and seed give the same assignment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError
from harness.judge.judge_defaults import DEFAULT_K, ROUTING_TIME_LIMIT
from harness.judge.routing.milp_solve import solve_milp
from harness.judge.routing.roster import Reviewer, Roster, store_roster
from harness.progress import status
from harness.study.records import JsonObject
from harness.study.store import Study
from harness.study.tables.assignments import (
    assignments_frame,
    count_assignments,
    insert_assignments,
)
from harness.study.tables.judge_reads import routing_items

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from scipy.optimize import LinearConstraint

W_BALANCE, W_EXPERTISE, W_NOISE = 10.0, 1.0, 0.01
#: a balance cell: which items are in it (0/1 per item) and how far off its share is free
Cell = tuple["np.ndarray", float]
MIP_GAP = 1e-4  # relative optimality gap at which the solver stops


@dataclass
class RoutingResult:
    """The assignment (item, reviewer, position), the balance table and how it was found."""

    assignments: pd.DataFrame  # item_id, reviewer_id, position
    balance: Any  # DataFrame, one row per reviewer (None until gold_draw.store_tiers sets it)
    seed: int
    k: int
    distinct_topics: bool
    solver: str
    # what the assignments hold, when controls or adjudicators are among them (`parts`)
    parts: dict[str, int] | None = None

    def summary(self) -> str:
        lines = [
            f"Routing: {self._count()} (seed {self.seed}; one item per topic "
            f"per human reviewer: {'yes' if self.distinct_topics else 'no'}; {self.solver})",
            self.balance.to_string(index=False),
        ]
        return "\n".join(lines)

    def _count(self) -> str:
        total = len(self.assignments)
        p = self.parts
        if not p or (not p["control_assignments"] and not p["adjudicator_assignments"]):
            return (
                f"{self.assignments.item_id.nunique()} items x k={self.k} reviewers "
                f"= {total} assignments"
            )
        items, real = p["real_items"], p["real_assignments"]
        text = (
            f"{items} real items x k={self.k} = {real}"
            if items * self.k == real
            else f"{items} real items, {real} assignments (k={self.k})"
        )
        if p["control_assignments"]:
            text += (
                f", plus {p['control_assignments']} assignments of {p['control_items']} "
                "control items"
            )
        if p["adjudicator_assignments"]:
            text += f", plus {p['adjudicator_assignments']} adjudicator assignments"
        return f"{text} = {total} assignments"

    def manifest_section(self) -> JsonObject:
        return {
            "seed": self.seed,
            "k": self.k,
            "distinct_topics": self.distinct_topics,
            "solver": self.solver,
            "n_items": int(self.assignments.item_id.nunique()),
            "n_assignments": len(self.assignments),
            **({"parts": dict(self.parts)} if self.parts else {}),
            "balance": json.loads(self.balance.to_json(orient="records")),
        }


def route(
    study: Study, roster: Roster, *, k: int = DEFAULT_K, seed: int = 0, distinct_topics: bool = True
) -> RoutingResult:
    """Assign every item to k reviewers and store the assignment (refused if one exists)."""
    if count_assignments(study):
        raise HarnessError("items are already routed in this study", file=study.path)

    result = plan_routing(study, roster, k=k, seed=seed, distinct_topics=distinct_topics)
    store_roster(study, roster)
    return store_routing(study, result)


def store_routing(study: Study, result: RoutingResult) -> RoutingResult:
    """Store a planned assignment (real and control items) in one transaction."""
    rows = result.assignments[["item_id", "reviewer_id", "position"]].itertuples(index=False)
    with study.transaction() as conn:
        insert_assignments(conn, rows)
    return result


def check_routing(
    study: Study, roster: Roster, *, k: int = DEFAULT_K, distinct_topics: bool = True
) -> None:
    """Raise when the study's items cannot be routed to this roster (before any model runs)."""
    items = routing_items(study)
    if items.empty:
        raise HarnessError("no items to route (no outputs with status ok)", file=study.path)
    _check_k(study, k)
    check_feasible(items, sorted(roster.reviewers, key=lambda r: r.id), k, distinct_topics)


def _check_k(study: Study, k: int) -> None:
    if k < 1 or (k < 2 and not study.pilot):
        raise HarnessError(
            f"k={k}: each item needs at least 2 reviewers (k=1 only in a pilot study)", column="--k"
        )


def plan_routing(
    study: Study,
    roster: Roster,
    *,
    k: int = DEFAULT_K,
    seed: int = 0,
    distinct_topics: bool = True,
    items: pd.DataFrame | None = None,
) -> RoutingResult:
    """Compute (without storing) the assignment for the study's items (or `items`, a subset of
    `routing_items`: the adjudication sample's)."""
    import pandas as pd

    items = routing_items(study) if items is None else items
    if items.empty:
        raise HarnessError("no items to route (no outputs with status ok)", file=study.path)
    _check_k(study, k)
    reviewers = sorted(roster.reviewers, key=lambda r: r.id)
    check_feasible(items, reviewers, k, distinct_topics)
    with status(f"routing {len(items)} items to {len(reviewers)} reviewers, k={k} (HiGHS MILP)"):
        chosen, solver = _solve(items, reviewers, k, seed, distinct_topics)
    assignments = pd.DataFrame(
        [(items.item_id.iat[i], reviewers[r].id) for i, r in chosen],
        columns=["item_id", "reviewer_id"],
    )
    assignments = _positions(assignments, items, seed)
    balance = balance_table(items, assignments, reviewers)
    return RoutingResult(assignments, balance, seed, k, distinct_topics, solver)


def per_topic_limit(reviewer: Reviewer, distinct_topics: bool) -> bool:
    return distinct_topics and reviewer.kind == "human"


def check_feasible(items: pd.DataFrame, reviewers: list[Reviewer], k: int, distinct: bool) -> None:
    """Necessary conditions, each with a message that says which and by how much."""
    n_items, n_topics = len(items), items.topic_id.nunique()
    if k > len(reviewers):
        raise HarnessError(
            f"k={k} distinct reviewers per item, but the roster has "
            f"{len(reviewers)} (short by {k - len(reviewers)})",
            column="--k",
        )
    need = n_items * k
    offer = sum(
        min(r.capacity, n_topics if per_topic_limit(r, distinct) else n_items) for r in reviewers
    )
    if offer < need:
        # Name the remedy only when the one-item-per-topic rule, not capacity, is what binds.
        lifted = sum(min(r.capacity, n_items) for r in reviewers)
        hint = "; --same-topic lifts that rule" if distinct and lifted >= need else ""
        raise HarnessError(
            f"{n_items} items x k={k} need {need} assignments, the roster offers "
            f"{offer} (short by {need - offer}; a human reviewer takes at most one item per "
            f"topic, here {n_topics}{hint})",
            column="capacity",
        )
    sizes = items.groupby("topic_id").size()
    worst, gap = None, 0
    for topic, m in sizes.items():
        slots = sum(min(r.capacity, 1 if per_topic_limit(r, distinct) else m) for r in reviewers)
        if m * k - slots > gap:
            worst, gap, detail = topic, m * k - slots, (m, slots)
    if worst is not None:
        m, slots = detail
        raise HarnessError(
            f"topic {worst}: {m} items x k={k} need {m * k} reviewer slots but a human reviewer "
            f"may take only one item per topic and the roster offers {slots} (short by {gap}; "
            "add reviewers or allow several items per topic with --same-topic)",
            column="reviewers",
        )


class ConstraintRows:
    """Sparse constraint rows lb <= A x <= ub, added a row at a time from index arrays."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lb: list[float] = []
        self.ub: list[float] = []

    def add(self, cols: np.ndarray, vals: np.ndarray, low: float, high: float) -> None:
        import numpy as np

        self.rows.append(np.full(len(cols), len(self.lb)))
        self.cols.append(cols)
        self.vals.append(vals)
        self.lb.append(low)
        self.ub.append(high)

    def constraint(self, n_vars: int) -> LinearConstraint:
        import numpy as np
        from scipy.optimize import LinearConstraint
        from scipy.sparse import csr_matrix

        matrix = csr_matrix(
            (np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
            shape=(len(self.lb), n_vars),
        )
        return LinearConstraint(matrix, self.lb, self.ub)


def _solve(
    items: pd.DataFrame, reviewers: list[Reviewer], k: int, seed: int, distinct: bool
) -> tuple[list[tuple[int, int]], str]:
    """Mixed-integer programme (HiGHS via scipy).

    Variables: x[i, r] in {0, 1} (item i to reviewer r) and d[r, c] >= 0, the deviation of
    reviewer r's items of cell c (a condition, or a model) from the cell's share of r's items,
    beyond the cell's tolerance.
    """
    import numpy as np
    from scipy.optimize import Bounds

    n_i, n_r = len(items), len(reviewers)
    partitions = _balance_cells(items)
    cells = [cell for group in partitions for cell in group]  # (indicator, tolerance) per cell
    n_c = len(cells)
    n_x = n_i * n_r
    n_vars = n_x + n_r * n_c

    rng = np.random.default_rng(seed)
    overlap = np.array(
        [
            [len({fa, fb} & set(rv.expertise)) for rv in reviewers]
            for fa, fb in zip(items.field_a, items.field_b, strict=True)
        ],
        float,
    )
    cost = np.concatenate(
        [
            (-W_EXPERTISE * overlap + W_NOISE * rng.random((n_i, n_r))).ravel(),
            np.full(n_r * n_c, W_BALANCE),
        ]
    )

    rows = ConstraintRows()
    for i in range(n_i):  # k distinct reviewers per item
        rows.add(i * n_r + np.arange(n_r), np.ones(n_r), k, k)
    topics = [np.asarray(m) for m in items.groupby("topic_id").indices.values() if len(m) > 1]
    loads = load_range(items, reviewers, k, distinct)
    for r, rv in enumerate(reviewers):
        column = np.arange(n_i) * n_r + r
        rows.add(column, np.ones(n_i), 0, rv.capacity)
        if per_topic_limit(rv, distinct):
            for members in topics:
                rows.add(members * n_r + r, np.ones(len(members)), 0, 1)
        for j, (mine, tolerance) in enumerate(cells):
            # -d_rc - tol <= count_rc - share_c * count_r <= d_rc + tol
            diff = mine - mine.mean()
            cols = np.append(column, n_x + r * n_c + j)
            rows.add(cols, np.append(diff, -1.0), -np.inf, tolerance)
            rows.add(cols, np.append(-diff, -1.0), -np.inf, tolerance)
        least = rounding_floor(partitions, *loads[r])
        if least > 0:  # sum_c d_rc >= what whole items cannot avoid (see rounding_floor)
            rows.add(n_x + r * n_c + np.arange(n_c), np.ones(n_c), least, np.inf)

    upper = np.concatenate([np.ones(n_x), np.full(n_r * n_c, np.inf)])
    integrality = np.concatenate([np.ones(n_x), np.zeros(n_vars - n_x)])
    res = solve_milp(
        cost,
        integrality=integrality,
        bounds=Bounds(np.zeros(n_vars), upper),
        constraints=rows.constraint(n_vars),
        options={"time_limit": ROUTING_TIME_LIMIT, "mip_rel_gap": MIP_GAP},
    )
    if res.x is None:
        what = (
            f"no assignment found within {ROUTING_TIME_LIMIT:.0f} s"
            if res.status == 1
            else "the routing constraints cannot all be met"
        )
        raise HarnessError(
            f"{what} ({n_i} items, k={k}, {n_r} reviewers, capacity "
            f"{sum(r.capacity for r in reviewers)}): {res.message}",
            column="reviewers",
        )
    solution = res.x[:n_x].reshape(n_i, n_r) > 0.5
    chosen = [(int(i), int(r)) for i, r in zip(*np.nonzero(solution), strict=True)]
    status = "optimal" if res.status == 0 else f"best found within {ROUTING_TIME_LIMIT:.0f} s"
    return chosen, f"HiGHS MILP, {status}"


def load_range(
    items: pd.DataFrame, reviewers: list[Reviewer], k: int, distinct: bool
) -> list[tuple[int, int]]:
    """(fewest, most) items each reviewer can take in any assignment: at most its capacity, its
    one item per topic (a human) and every item; at least what the others cannot take of the
    k x items assignments."""
    n_items, n_topics = len(items), items.topic_id.nunique()
    most = [
        min(rv.capacity, n_topics if per_topic_limit(rv, distinct) else n_items, n_items)
        for rv in reviewers
    ]
    others = sum(most)
    return [(max(0, n_items * k - (others - m)), m) for m in most]


def rounding_floor(partitions: list[list[Cell]], fewest: int, most: int) -> float:
    """The least sum of deviations (the d of `_solve`) that a reviewer taking fewest..most items
    can have. Whole items rarely split by the shares (14 items over 3 conditions: 4.67 each),
    but the relaxation HiGHS bounds the optimum with splits them freely; where a reviewer's
    count is fixed (the adjudicators of a drawn sample, one item per topic each, take one of
    every topic), the optimum was found in a second and proven in minutes without this bound
    (a valid row: every assignment meets it)."""
    import numpy as np

    groups = [
        (np.array([mine.mean() for mine, _ in group]), np.array([tol for _, tol in group]))
        for group in partitions
    ]
    least = 0.0
    for n in range(fewest, most + 1):
        cost = sum(rounding_cost(shares, tol, n) for shares, tol in groups)
        least = cost if n == fewest else min(least, cost)
        if least == 0.0:
            break
    return least


def rounding_cost(shares: np.ndarray, tolerance: np.ndarray, load: int) -> float:
    """The least sum of |count - share x load| beyond each tolerance over counts of whole items
    that add up to `load` (`shares` add up to 1). Each cell's cost is convex in its count, so
    adding the items one at a time where the cost grows least reaches the least sum; it starts
    from floor(share x load - tolerance), below which no count of some least sum lies (an item
    moved up to it saves 1 and costs another cell at most 1)."""
    import numpy as np

    ideal = shares * load

    def cost(counts: np.ndarray) -> np.ndarray:
        beyond: np.ndarray = np.maximum(np.abs(counts - ideal) - tolerance, 0.0)
        return beyond

    counts = np.maximum(np.floor(ideal - tolerance), 0.0)
    for _ in range(load - int(counts.sum())):
        counts[int(np.argmin(cost(counts + 1) - cost(counts)))] += 1
    return float(cost(counts).sum())


def _balance_cells(items: pd.DataFrame) -> list[list[Cell]]:
    """What each reviewer's share is balanced over, as partitions of the items: the conditions,
    each exactly, and in a study of several models the models, each within one item (so no
    reviewer sees mostly one model; the tolerance keeps the integer programme quick to prove
    optimal when shares are not whole)."""
    condition = items.condition.to_numpy(dtype=object)
    partitions = [[((condition == c).astype(float), 0.0) for c in sorted(set(condition))]]
    if items.model.nunique() > 1:
        model = items.model.to_numpy(dtype=object)
        partitions.append([((model == m).astype(float), 1.0) for m in sorted(set(model))])
    return partitions


def _positions(assignments: pd.DataFrame, items: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Each reviewer's items in a seeded random order (1-based positions).

    The order is drawn from output ids, not item ids, so it does not depend on the random ids.
    """
    rank = assignments.item_id.map(dict(zip(items.item_id, range(len(items)), strict=True)))
    return shuffled_positions(assignments, rank, seed)


def shuffled_positions(assignments: pd.DataFrame, order: pd.Series, seed: int) -> pd.DataFrame:
    """The assignment (item_id, reviewer_id) with each reviewer's items in one seeded random
    order, as 1-based `position`: real items alone, or real and control items together
    (`control_routing.merged_positions`). `order`: a stable sort key per row (never the random
    item ids), which fixes the sequence the permutation is drawn for."""
    import numpy as np
    import pandas as pd

    ranked = assignments.assign(_order=order).sort_values(["reviewer_id", "_order"])
    rng = np.random.default_rng([seed, 1])
    parts = [
        group.assign(position=rng.permutation(len(group)) + 1)
        for _, group in ranked.groupby("reviewer_id", sort=True)
    ]
    result = pd.concat(parts).drop(columns="_order").sort_values(["reviewer_id", "position"])
    return result.reset_index(drop=True)


def balance_table(
    items: pd.DataFrame, assignments: pd.DataFrame, reviewers: list[Reviewer]
) -> pd.DataFrame:
    """Items per reviewer by condition, how many match the reviewer's expertise, and (when
    there are any) how many control items each reviewer has."""
    import pandas as pd

    merged = assignments.merge(items, on="item_id")
    controls = ~assignments.item_id.isin(items.item_id)  # items of no output: control items
    conditions = sorted(items.condition.unique())
    rows = []
    for rv in reviewers:
        mine = merged[merged.reviewer_id == rv.id]
        match = sum(
            bool({fa, fb} & set(rv.expertise))
            for fa, fb in zip(mine.field_a, mine.field_b, strict=True)
        )
        row = {"reviewer": rv.id, "kind": rv.kind, "capacity": rv.capacity, "assigned": len(mine)}
        row.update({c: int((mine.condition == c).sum()) for c in conditions})
        row["expertise_match"] = int(match)
        row["max_per_topic"] = int(mine.groupby("topic_id").size().max()) if len(mine) else 0
        if controls.any():  # counts only: which items are controls stays sealed
            row["controls"] = int((controls & (assignments.reviewer_id == rv.id)).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def stored_routing(study: Study) -> pd.DataFrame:
    """The stored assignment with the balance columns (for status and re-writing packets)."""
    return assignments_frame(study)
