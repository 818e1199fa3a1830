"""No import cycle between the sub-packages and root modules of `harness/judge/`, imports inside
functions included (`if TYPE_CHECKING:` ones left out: they never run)."""

from __future__ import annotations

import ast
from pathlib import Path

JUDGE = Path(__file__).resolve().parents[2] / "harness" / "judge"


def _unit(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["harness", "judge"] and len(parts) > 2 else None


def _type_only(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found.update(id(n) for b in node.body for n in ast.walk(b))
    return found


def judge_graph() -> dict[str, set[str]]:
    """unit -> the units it imports (a unit: a sub-package or a root module of judge/)."""
    graph: dict[str, set[str]] = {}
    for path in JUDGE.rglob("*.py"):
        source = _unit("harness.judge." + ".".join(path.relative_to(JUDGE).with_suffix("").parts))
        if source is None or source == "__init__":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip or not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for target in filter(None, map(_unit, names)):
                if target != source and target != "__init__":
                    graph.setdefault(source, set()).add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_graph_sees_the_sub_packages() -> None:
    graph = judge_graph()
    assert {"blinding", "controls", "routing", "automated"} <= set(graph)
    assert "routing" in graph["controls"]


def test_no_cycle_between_judge_sub_packages() -> None:
    assert _cycle(judge_graph()) is None


def test_a_cycle_is_found() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
