"""The package's layers, checked on every import the code writes, deferred ones included.

About a quarter of the package's imports sit inside functions (so that `harness --help` stays
fast), where they hide which module depends on which. This test reads them all from the syntax
tree: imports at module level, inside functions (`deferred`), under `if TYPE_CHECKING:`
(`type-only`) and in try blocks (`guarded`). `from harness.x import y` counts as an import of the
module `harness.x.y` when y is a submodule, else of `harness.x`; relative imports are resolved.
Importing a submodule also runs its parents' `__init__`, which is not counted: only what a module
names is.

The rules, stated by `LAYERS` (top to bottom; docs/architecture.md holds the same list, which
tests/test_architecture_doc.py compares) and checked by `check`:

- every top-level module or package of harness/ sits in exactly one layer;
- no import points to a higher layer, type-only imports included: an annotation that needs a
  higher layer's type means the code sits in the wrong layer;
- imports within a layer (sideways) are allowed, but there is no import cycle between modules
  (strongly connected components of the module graph, deferred imports included) and none
  between the units of the stage layer: stages do import each other's public functions
  (`judge` reads the analysis plan and opens the collect models for control texts, `geometry`
  uses Holm's correction from `analysis`, `analyze` writes the explorer, `topics check` renders
  prompts with `generation`, `status` asks the judge which model wrote the blinded steps),
  always one way;
- type-only imports are left out of both cycle checks: they never run, so a record type may be
  named sideways by a module that the record's own module imports (`models.base` annotates with
  `models.budget.Budget`, and `budget` builds on `base`).

A failure names the importing module's file, the line, the importing and the imported module.
`python -m tests.test_layers` prints the import census (deferred against all imports) and the
graph between the top-level units.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "harness"

Layers = Sequence[tuple[str, Sequence[str]]]

#: Top to bottom; a unit is a top-level module or package of harness/ (`__init__`: the package's
#: own module, the public API).
LAYERS: Layers = (
    ("api", ("__init__",)),
    ("cli", ("cli",)),
    ("orchestration", ("pipeline",)),
    (
        "stages",
        (
            "generation",
            "collection",
            "judge",
            "analysis",
            "geometry",
            "explore",
            "export",
            "status",
            "curation",
        ),
    ),
    ("services", ("models", "literature", "materials")),
    ("store", ("study",)),
    ("foundations", ("errors", "defaults", "progress", "logs", "_version")),
)
STAGES = "stages"

#: Cycles left in place, each with the reason; the check fails once one is gone, so the entry
#: goes with it.
KNOWN_CYCLES: Mapping[frozenset[str], str] = {}


@dataclass(frozen=True)
class Import:
    importer: str
    path: str  # the importing file, relative to the package's parent
    line: int
    imported: str
    deferred: bool  # inside a function
    type_only: bool  # under `if TYPE_CHECKING:`
    guarded: bool  # inside a try block

    def __str__(self) -> str:
        kinds = [k for k in ("deferred", "type_only", "guarded") if getattr(self, k)]
        how = f" ({', '.join(kinds).replace('_', '-')})" if kinds else ""
        return f"{self.path}:{self.line}: {self.importer} imports {self.imported}{how}"


@dataclass(frozen=True)
class _Where:
    deferred: bool = False
    type_only: bool = False
    guarded: bool = False


def modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module under the package directory `root`."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_statements(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, _Where]]:
    """Every import statement in `tree`, with where it sits."""
    stack: list[tuple[ast.AST, _Where]] = [(tree, _Where())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, where
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            where = _Where(True, where.type_only, where.guarded)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            inside = _Where(where.deferred, True, where.guarded)
            stack += [(child, inside) for child in node.body]
            stack += [(child, where) for child in node.orelse]
            continue
        if isinstance(node, (ast.Try, ast.TryStar)):
            where = _Where(where.deferred, where.type_only, True)
        stack += [(child, where) for child in ast.iter_child_nodes(node)]


def _resolve(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> list[str]:
    """The dotted names an import statement reaches (`from a import b` gives `a.b`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = importer.split(".")[: None if is_package else -1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def collect(root: Path) -> list[Import]:
    """Every import of a module of the package `root` by a module of it."""
    known = modules(root)
    found = []
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, where in import_statements(tree):
            reached = _resolve(node, name, path.name == "__init__.py")
            if isinstance(node, ast.ImportFrom):
                # `from a import b`: the submodule a.b where there is one, else a itself
                subs = [r for r in reached[:-1] if r in known]
                reached = subs + ([reached[-1]] if len(subs) < len(reached) - 1 else [])
            for target in dict.fromkeys(_known_prefix(r, known) for r in reached):
                if target is not None and target != name:
                    rel = str(path.relative_to(root.parent))
                    found.append(Import(name, rel, node.lineno, target, **vars(where)))
    return found


def _known_prefix(name: str, known: Mapping[str, Path]) -> str | None:
    parts = name.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts) if parts else None


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _placement(root: Path, layers: Layers) -> tuple[dict[str, int], list[str]]:
    level: dict[str, int] = {}
    problems = []
    for i, (_, units) in enumerate(layers):
        for unit in units:
            if unit in level:
                problems.append(f"unit {unit} is in two layers")
            level[unit] = i
    present = {unit_of(m) for m in modules(root)}
    problems += [f"{u} (layer spec) is not in {root}" for u in sorted(set(level) - present)]
    problems += [f"{root.name}/{u} is in no layer" for u in sorted(present - set(level))]
    return level, problems


def _cycle_report(kind: str, members: list[str], imports: list[Import], of: dict[str, str]) -> str:
    """The component's members, then one shortest cycle through its first member, one import (the
    first in its file) per step."""
    inside = set(members)
    first: dict[tuple[str, str], Import] = {}
    for i in sorted(imports, key=lambda i: (i.path, i.line)):
        a, b = of[i.importer], of[i.imported]
        if a != b and a in inside and b in inside:
            first.setdefault((a, b), i)
    start = members[0]
    came: dict[str, str] = {}
    queue = [start]
    while start not in came:
        node = queue.pop(0)
        for a, b in first:
            if a == node and b not in came:
                came[b] = a
                queue.append(b)
    steps = [(came[start], start)]
    while steps[-1][0] != start:
        steps.append((came[steps[-1][0]], steps[-1][0]))
    shown = "\n  ".join(str(first[step]) for step in reversed(steps))
    return f"import cycle between {kind} {', '.join(members)}:\n  {shown}"


def check(
    root: Path,
    layers: Layers,
    stages: str | None = None,
    known_cycles: Mapping[frozenset[str], str] | None = None,
) -> list[str]:
    """Every breach of the layering of the package `root`, one message each."""
    level, problems = _placement(root, layers)
    imports = collect(root)
    names = [name for name, _ in layers]
    for i in imports:
        up, down = level.get(unit_of(i.importer)), level.get(unit_of(i.imported))
        if up is not None and down is not None and down < up:
            problems.append(f"{i}: layer {names[up]} imports layer {names[down]} above it")
    runtime = [i for i in imports if not i.type_only]
    known = dict(known_cycles or {})
    module_graph: dict[str, set[str]] = defaultdict(set)
    for i in runtime:
        module_graph[i.importer].add(i.imported)
    itself = {m: m for m in modules(root)}
    for members in _cycles(module_graph):
        if known.pop(frozenset(members), None) is None:
            problems.append(_cycle_report("modules", members, runtime, itself))
    if stages is not None:
        in_stage = set(dict(layers)[stages])
        units = {m: unit_of(m) for m in modules(root)}
        unit_graph: dict[str, set[str]] = defaultdict(set)
        for i in runtime:
            a, b = units[i.importer], units[i.imported]
            if a != b and a in in_stage and b in in_stage:
                unit_graph[a].add(b)
        for members in _cycles(unit_graph):
            problems.append(_cycle_report(f"{stages} units", members, runtime, units))
    problems += _package_cycles(root, runtime, known)
    problems += [f"known cycle {sorted(m)} is gone: drop it from the list" for m in known]
    return problems


def part_cycles(root: Path, runtime: list[Import]) -> list[tuple[str, list[str], dict[str, str]]]:
    """Within every package below the top, its direct parts (sub-packages and modules) that
    import one another both ways: (package, the cycle's parts, module -> part). A cycle of
    modules alone is left out: it is reported as a cycle between modules."""
    known_modules = modules(root)
    packages = {m for m, path in known_modules.items() if path.name == "__init__.py"}
    found = []
    for package in sorted(packages - {root.name}):  # the top level's units: see `check`
        prefix = package + "."
        part = {
            m: prefix + m[len(prefix) :].split(".")[0] if m.startswith(prefix) else m
            for m in known_modules
        }
        graph: dict[str, set[str]] = defaultdict(set)
        for i in runtime:
            a, b = part[i.importer], part[i.imported]
            if a != b and a.startswith(prefix) and b.startswith(prefix):
                graph[a].add(b)
        found += [
            (package, members, part)
            for members in _cycles(graph)
            if any(m in packages for m in members)
        ]
    return found


def _package_cycles(
    root: Path, runtime: list[Import], known: dict[frozenset[str], str]
) -> list[str]:
    """Within every package, its direct parts import one another one way only:
    `judge.blinding` may use `judge.controls`, or the reverse, never both."""
    return [
        _cycle_report(f"parts of {package}", members, runtime, part)
        for package, members, part in part_cycles(root, runtime)
        if known.pop(frozenset(members), None) is None
    ]


def test_the_package_keeps_its_layers() -> None:
    problems = check(PACKAGE, LAYERS, STAGES, KNOWN_CYCLES)
    assert not problems, "\n".join(problems)


def test_the_walk_finds_deferred_type_only_and_guarded_imports(tmp_path: Path) -> None:
    imports = collect(PACKAGE)
    assert len(imports) > 500
    # the package's own modules are imported at module level, some only for annotations
    assert any(i.type_only for i in imports)
    assert [str(i) for i in collect(_plant(tmp_path, _CLEAN)) if i.deferred] == [
        "pkg/a/run.py:6: pkg.a.run imports pkg.b (deferred)"
    ]
    guarded = {
        **_CLEAN,
        "b/job.py": "try:\n    from pkg.low import base\nexcept ImportError:\n    pass\n",
    }
    assert [str(i) for i in collect(_plant(tmp_path, guarded)) if i.guarded] == [
        "pkg/b/job.py:2: pkg.b.job imports pkg.low.base (guarded)"
    ]


# A planted package: layers top > mid > low; mid's units a and b are the "stages".
_PLANTED_LAYERS: Layers = (("top", ("__init__", "top")), ("mid", ("a", "b")), ("low", ("low",)))
_CLEAN = {
    "__init__.py": "",
    "top.py": "from pkg import a\nfrom pkg.low import base\n",
    "a/__init__.py": "",
    "a/run.py": "from . import helper\nfrom ..low.base import X\n\n\ndef f():\n"
    "    from pkg import b\n",
    "a/helper.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
    "    from pkg.a.run import f\n    from pkg.b.job import J\n",
    "b/__init__.py": "",
    "b/job.py": "import pkg.low.base\ntry:\n    import numpy\nexcept ImportError:\n    pass\n",
    "low/__init__.py": "",
    "low/base.py": "X = 1\n",
}


def _plant(tmp_path: Path, files: Mapping[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    # a type-only import may point sideways and close a cycle (helper <-> run, a <-> b)
    assert check(_plant(tmp_path, _CLEAN), _PLANTED_LAYERS, "mid") == []


def test_imports_are_resolved_and_classified(tmp_path: Path) -> None:
    found = {str(i) for i in collect(_plant(tmp_path, _CLEAN))}
    assert found == {
        "pkg/top.py:1: pkg.top imports pkg.a",
        "pkg/top.py:2: pkg.top imports pkg.low.base",
        "pkg/a/run.py:1: pkg.a.run imports pkg.a.helper",
        "pkg/a/run.py:2: pkg.a.run imports pkg.low.base",
        "pkg/a/run.py:6: pkg.a.run imports pkg.b (deferred)",
        "pkg/a/helper.py:3: pkg.a.helper imports pkg.a.run (type-only)",
        "pkg/a/helper.py:4: pkg.a.helper imports pkg.b.job (type-only)",
        "pkg/b/job.py:1: pkg.b.job imports pkg.low.base",
    }


def test_an_upward_import_and_a_deferred_cycle_are_reported(tmp_path: Path) -> None:
    planted = {
        **_CLEAN,
        "low/base.py": "from pkg import top\nX = 1\n",  # low -> top: upward, and a cycle
        "b/job.py": "from pkg.a.run import f\n",  # b -> a, while a.run imports b inside f()
    }
    assert check(_plant(tmp_path, planted), _PLANTED_LAYERS, "mid") == [
        "pkg/low/base.py:1: pkg.low.base imports pkg.top: layer low imports layer top above it",
        "import cycle between modules pkg.low.base, pkg.top:\n"
        "  pkg/low/base.py:1: pkg.low.base imports pkg.top\n"
        "  pkg/top.py:2: pkg.top imports pkg.low.base",
        "import cycle between mid units a, b:\n"
        "  pkg/a/run.py:6: pkg.a.run imports pkg.b (deferred)\n"
        "  pkg/b/job.py:1: pkg.b.job imports pkg.a.run",
    ]


def test_a_deferred_module_cycle_is_reported(tmp_path: Path) -> None:
    planted = {
        **_CLEAN,
        "a/helper.py": "def g():\n    from pkg.a.run import f\n",  # run -> helper -> run
    }
    assert check(_plant(tmp_path, planted), _PLANTED_LAYERS, "mid") == [
        "import cycle between modules pkg.a.helper, pkg.a.run:\n"
        "  pkg/a/helper.py:2: pkg.a.helper imports pkg.a.run (deferred)\n"
        "  pkg/a/run.py:1: pkg.a.run imports pkg.a.helper"
    ]


def test_a_type_only_import_may_not_point_upward(tmp_path: Path) -> None:
    planted = {**_CLEAN, "low/base.py": "if TYPE_CHECKING:\n    from pkg.a.run import f\n"}
    assert check(_plant(tmp_path, planted), _PLANTED_LAYERS, "mid") == [
        "pkg/low/base.py:2: pkg.low.base imports pkg.a.run (type-only): "
        "layer low imports layer mid above it"
    ]


def test_units_must_each_have_one_layer(tmp_path: Path) -> None:
    root = _plant(tmp_path, {**_CLEAN, "extra.py": ""})
    layers = (*_PLANTED_LAYERS, ("more", ("gone", "low")))
    assert check(root, layers) == [
        "unit low is in two layers",
        f"gone (layer spec) is not in {root}",
        "pkg/extra is in no layer",
    ]


def test_a_known_cycle_is_let_through_until_it_is_gone(tmp_path: Path) -> None:
    planted = {**_CLEAN, "a/helper.py": "def g():\n    from pkg.a.run import f\n"}
    known = {frozenset({"pkg.a.helper", "pkg.a.run"}): "planted"}
    assert check(_plant(tmp_path, planted), _PLANTED_LAYERS, "mid", known) == []
    assert check(_plant(tmp_path / "clean", _CLEAN), _PLANTED_LAYERS, "mid", known) == [
        "known cycle ['pkg.a.helper', 'pkg.a.run'] is gone: drop it from the list"
    ]


def census(root: Path) -> dict[str, int]:
    """Import statements of every module under `root`: all, inside functions, type-only, and
    those of the package's own modules."""
    counts: Counter[str] = Counter()
    for path in modules(root).values():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, where in import_statements(tree):
            own = isinstance(node, ast.ImportFrom) and not node.level and node.module or ""
            names = [own] if own else [a.name for a in getattr(node, "names", [])]
            counts["all"] += 1
            counts["deferred"] += where.deferred
            counts["type_only"] += where.type_only
            if any(n.split(".")[0] == root.name for n in names) or getattr(node, "level", 0):
                counts["package"] += 1
                counts["package_deferred"] += where.deferred
    return dict(counts)


def main() -> None:
    counts = census(PACKAGE)
    share = counts["deferred"] / counts["all"]
    print(
        f"import statements: {counts['all']}, inside functions: {counts['deferred']} ({share:.0%})"
    )
    print(
        f"of the package's own modules: {counts['package']}, "
        f"inside functions: {counts['package_deferred']}; type-only: {counts['type_only']}"
    )
    graph: dict[str, set[str]] = defaultdict(set)
    for i in collect(PACKAGE):
        if unit_of(i.importer) != unit_of(i.imported):
            graph[unit_of(i.importer)].add(unit_of(i.imported))
    for unit in sorted(graph):
        print(f"{unit} -> {' '.join(sorted(graph[unit]))}")
    problems = check(PACKAGE, LAYERS, STAGES, KNOWN_CYCLES)
    print("\n".join(problems) or "layers kept")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()


def test_a_cycle_between_sub_packages_is_reported(tmp_path: Path) -> None:
    """No module imports itself back, but the sub-packages a.x and a.y lean on each other."""
    planted = {
        **_CLEAN,
        "a/x/__init__.py": "",
        "a/x/m.py": "from pkg.a.y import n\n",
        "a/x/j.py": "",
        "a/y/__init__.py": "",
        "a/y/n.py": "",
        "a/y/k.py": "def g():\n    from pkg.a.x import j\n",
    }
    assert check(_plant(tmp_path, planted), _PLANTED_LAYERS, "mid") == [
        "import cycle between parts of pkg.a pkg.a.x, pkg.a.y:\n"
        "  pkg/a/x/m.py:1: pkg.a.x.m imports pkg.a.y.n\n"
        "  pkg/a/y/k.py:2: pkg.a.y.k imports pkg.a.x.j (deferred)"
    ]
