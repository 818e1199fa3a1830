"""How options and dependencies travel through the package, read from its source alone.

Prints, for the package under ROOT/harness: lines, `Any` annotations per 1,000 lines,
`dict[str, Any]` occurrences, imports inside functions against all imports, and the ten functions
with the most parameters. Run on two checkouts to compare before and after a change:

    python tools/code_metrics.py [ROOT]
"""

from __future__ import annotations

import ast
import sys
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
    lines = anys = dict_any = inner = every = 0
    widths: list[tuple[int, str]] = []
    for path in _modules(root):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        lines += text.count("\n")
        anys += _any_count(tree)
        dict_any += text.count("dict[str, Any]")
        i, e = _imports(tree)
        inner, every = inner + i, every + e
        widths += _widths(tree, str(path.relative_to(root)))
    print(f"lines                      {lines}")
    print(f"Any annotations / 1k lines {1000 * anys / lines:.1f} ({anys})")
    print(f"dict[str, Any]             {dict_any}")
    print(f"imports inside functions   {inner} of {every} ({100 * inner / every:.0f}%)")
    print("widest functions (parameters):")
    for count, name in sorted(widths, reverse=True)[:10]:
        print(f"  {count:3d}  {name}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
