"""pyproject.toml declares exactly the packages harness/ imports, deferred imports included."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import harness

ROOT = Path(harness.__file__).resolve().parent.parent
#: Declared but never imported by name: transformers reads GGUF models through them (without
#: accelerate, loading the embedded model fails: "accelerate is required when loading a GGUF").
USED_THROUGH_OTHERS = {"gguf", "accelerate"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules() -> dict[str, str]:
    """Top-level third-party module -> one file importing it, over every import statement."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "harness").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "harness":
                    found.setdefault(top, path.relative_to(ROOT).as_posix())
    return found


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {
        _normal(re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0]) for spec in project["dependencies"]
    }


def test_every_imported_package_is_declared_and_every_declared_one_used():
    owners = metadata.packages_distributions()
    imported = {
        module: {_normal(d) for d in owners.get(module, [module])} for module in imported_modules()
    }
    wanted = declared()
    missing = {m: f for m, f in imported_modules().items() if not imported[m] & wanted}
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"
    used = set().union(*imported.values())
    assert wanted - used - USED_THROUGH_OTHERS == set(), "declared but never imported"


def test_the_scan_sees_deferred_imports():
    modules = imported_modules()
    assert modules["sklearn"] == "harness/judge/blinding/leak_audit.py"  # inside a function
    assert modules["openai"] == "harness/models/batch.py"  # under `if TYPE_CHECKING:`
    assert "click" not in modules and "httpx2" not in modules
