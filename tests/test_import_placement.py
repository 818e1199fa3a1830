"""Imports sit at the top of the module, so its first lines say what it depends on.

The one exception: the heavy libraries that pyproject.toml bans at module level
(`[tool.ruff.lint.flake8-tidy-imports] banned-module-level-imports`: numpy, pandas, torch, ...)
are imported inside the functions that use them, so that opening a study or printing a command's
help does not pay for them. `import harness` and `harness --help` stay fast another way: the
package root and the CLI import a stage's module only when it is used. `make check` runs this
file with ruff and mypy.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from tests.test_layers import PACKAGE, import_statements

HEAVY = frozenset(
    tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"][
        "lint"
    ]["flake8-tidy-imports"]["banned-module-level-imports"]
)


def _roots(node: ast.Import | ast.ImportFrom, own: str) -> list[str]:
    """The top-level names an import loads (`own`: the package a relative import is inside)."""
    if isinstance(node, ast.Import):
        return [alias.name.split(".")[0] for alias in node.names]
    return [own if node.level else (node.module or "").split(".")[0]]


def misplaced(root: Path, heavy: frozenset[str] = HEAVY) -> list[str]:
    """`file:line: module` for each import inside a function of a library outside `heavy`."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, where in import_statements(tree):
            if not where.deferred or where.type_only:
                continue
            for name in _roots(node, root.name):
                if name not in heavy:
                    found.append((str(path.relative_to(root.parent)), node.lineno, name))
    return [f"{path}:{line}: {name}" for path, line, name in sorted(found)]


def test_only_heavy_libraries_are_imported_inside_functions() -> None:
    found = misplaced(PACKAGE)
    assert not found, (
        "imports inside functions (move them to the module's top; only the libraries banned at "
        "module level in pyproject.toml may be imported in a function):\n" + "\n".join(found)
    )


def test_the_check_sees_nested_and_relative_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        "import json\n\n\ndef f():\n    import numpy\n    from . import n\n\n"
        "    class C:\n        def g(self):\n            import yaml\n",
        encoding="utf-8",
    )
    assert misplaced(pkg, frozenset({"numpy"})) == ["pkg/m.py:6: pkg", "pkg/m.py:10: yaml"]
