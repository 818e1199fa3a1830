"""No import cycle between the sub-packages and root modules of `harness/judge/`, imports inside
functions included (`if TYPE_CHECKING:` ones left out: they never run). The walk and the cycle
finder are tests/test_layers.py's, which checks every package the same way."""

from __future__ import annotations

from tests.test_layers import PACKAGE, collect, part_cycles

JUDGE = "harness.judge."


def judge_graph() -> dict[str, set[str]]:
    """unit -> the units it imports (a unit: a sub-package or a root module of judge/)."""
    graph: dict[str, set[str]] = {}
    for i in collect(PACKAGE):
        if i.type_only or not (i.importer.startswith(JUDGE) and i.imported.startswith(JUDGE)):
            continue
        source = i.importer[len(JUDGE) :].split(".")[0]
        target = i.imported[len(JUDGE) :].split(".")[0]
        if source != target:
            graph.setdefault(source, set()).add(target)
    return graph


def test_graph_sees_the_sub_packages() -> None:
    graph = judge_graph()
    assert {"blinding", "controls", "routing", "automated"} <= set(graph)
    assert "routing" in graph["controls"]


def test_no_cycle_between_judge_sub_packages() -> None:
    runtime = [i for i in collect(PACKAGE) if not i.type_only]
    assert [c for c in part_cycles(PACKAGE, runtime) if c[0] == "harness.judge"] == []
