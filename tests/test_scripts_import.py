"""The benchmarks and tools import only names the package defines: a moved or renamed name
fails here rather than on the day someone runs `make bench`."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*(ROOT / "benchmarks").glob("*.py"), *(ROOT / "tools").glob("*.py")])


def _resolves(module: str, name: str) -> bool:
    if hasattr(importlib.import_module(module), name):
        return True
    try:
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_harness_name_a_script_imports_exists(script: Path) -> None:
    missing = [
        f"{script.name}:{node.lineno}: {node.module}.{alias.name}"
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness")
        for alias in node.names
        if not _resolves(node.module or "", alias.name)
    ]
    assert not missing
