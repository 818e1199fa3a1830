"""How options and dependencies travel through the package, read from its source alone.

Prints, for the package under ROOT/harness: lines, `Any` annotations per 1,000 lines,
`dict[str, Any]` occurrences, imports inside functions against all imports (and how many of those
load a library other than the heavy ones pyproject.toml bans at module level), the share of
functions that contain an import, import cycles between the parts of each sub-package, and the ten
functions with the most parameters. Run on two checkouts to compare before and after a change:

    python tools/code_metrics.py [ROOT]
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in (root / "harness").rglob("*.py") if "__pycache__" not in p.parts)


def _any_count(tree: ast.AST) -> int:
    """Annotations that name `Any` anywhere inside them (arguments, returns, variables)."""
    annotations: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            annotations.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
    return sum(
        any(isinstance(n, ast.Name) and n.id == "Any" for n in ast.walk(a)) for a in annotations
    )


def _imports(tree: ast.AST) -> tuple[int, int]:
    """(imports inside a function, all imports)."""
    inner: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            inner.update(id(n) for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom))
    every = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    return len(inner), len(every)


def _functions_with_imports(tree: ast.AST) -> tuple[int, int]:
    """(functions whose own body holds an import, all functions); a nested function counts
    for itself, not for its parent."""
    with_import = total = 0
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            total += 1
            stack = list(fn.body)
            while stack:
                node = stack.pop()
                if isinstance(node, ast.Import | ast.ImportFrom):
                    with_import += 1
                    break
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    stack.extend(ast.iter_child_nodes(node))
    return with_import, total


def _light_inner(tree: ast.AST, heavy: set[str]) -> int:
    """Imports inside functions that load something other than a heavy library."""
    count = 0
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for n in ast.walk(fn):
                if isinstance(n, ast.Import):
                    count += any(a.name.split(".")[0] not in heavy for a in n.names)
                elif isinstance(n, ast.ImportFrom):
                    count += n.level > 0 or (n.module or "").split(".")[0] not in heavy
    return count


def _heavy(root: Path) -> set[str]:
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return set(config["tool"]["ruff"]["lint"]["flake8-tidy-imports"]["banned-module-level-imports"])


def _sub_package_cycles(root: Path) -> list[str]:
    """Within each package below the top, the parts (direct sub-packages and modules) that
    import one another both ways, type-only imports aside (tests/test_layers.py's rule)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's rule
    from tests.test_layers import collect, part_cycles

    package = root / "harness"
    runtime = [i for i in collect(package) if not i.type_only]
    return [" <-> ".join(members) for _, members, _ in part_cycles(package, runtime)]


def _widths(tree: ast.AST, name: str) -> list[tuple[int, str]]:
    out = []
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            a = fn.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
            count = len([p for p in params if p.arg not in {"self", "cls"}])
            out.append((count, f"{name}:{fn.name}"))
    return out


def main(root: Path) -> None:
    lines = anys = dict_any = inner = every = light = fn_import = functions = 0
    heavy = _heavy(root)
    widths: list[tuple[int, str]] = []
    for path in _modules(root):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        lines += text.count("\n")
        anys += _any_count(tree)
        dict_any += text.count("dict[str, Any]")
        i, e = _imports(tree)
        inner, every = inner + i, every + e
        light += _light_inner(tree, heavy)
        f_i, f_all = _functions_with_imports(tree)
        fn_import, functions = fn_import + f_i, functions + f_all
        widths += _widths(tree, str(path.relative_to(root)))
    print(f"lines                      {lines}")
    print(f"Any annotations / 1k lines {1000 * anys / lines:.1f} ({anys})")
    print(f"dict[str, Any]             {dict_any}")
    print(f"imports inside functions   {inner} of {every} ({100 * inner / every:.1f}%)")
    print(f"  of a light library       {light}")
    pct = 100 * fn_import / functions
    print(f"functions with an import   {fn_import} of {functions} ({pct:.1f}%)")
    cycles = _sub_package_cycles(root)
    print(f"sub-package cycles         {len(cycles)}")
    for cycle in cycles:
        print(f"  {cycle}")
    print("widest functions (parameters):")
    for count, name in sorted(widths, reverse=True)[:10]:
        print(f"  {count:3d}  {name}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
