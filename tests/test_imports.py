"""Every module of the package imports, so a deferred import cannot hide a missing dependency."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import harness

MODULES = sorted(info.name for info in pkgutil.walk_packages(harness.__path__, "harness."))


def test_walk_finds_the_package():
    assert {"harness.cli", "harness.models.openai_api", "harness.study.manifest"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    importlib.import_module(name)


def module_getattr_lines(source: str) -> list[int]:
    """Lines where a module defines or assigns `__getattr__` at its top level (a lazy export)."""
    lines = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "__getattr__":
            lines.append(node.lineno)
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        if "__getattr__" in names:
            lines.append(node.lineno)
    return lines


def test_getattr_finder_sees_both_forms():
    source = "def __getattr__(name):\n    pass\n\n__getattr__, __dir__ = make()\n"
    assert module_getattr_lines(source) == [1, 4]
    assert module_getattr_lines("class A:\n    def __getattr__(self, name): ...\n") == []


def test_only_the_package_root_exports_lazily():
    """Every public name is a plain attribute, except the package's own API: `harness/__init__.py`
    imports a stage when one of its names is first read."""
    root = Path(harness.__file__).parent
    found = [
        f"{path.relative_to(root.parent)}:{line}"
        for path in sorted(root.rglob("*.py"))
        for line in module_getattr_lines(path.read_text(encoding="utf-8"))
    ]
    assert [f.partition(":")[0] for f in found] == ["harness/__init__.py"]


def _type_checking_names(source: str) -> dict[str, str]:
    """name -> module of the `from M import name` lines under `if TYPE_CHECKING:`."""
    names = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                names.update({alias.name: stmt.module for alias in stmt.names})
    return names


def test_lazy_api_agrees_with_what_checkers_read():
    """The names type checkers read, the names `__getattr__` serves and `__all__` are one list,
    and every name resolves to the object its module defines."""
    source = Path(harness.__file__).read_text(encoding="utf-8")
    assert _type_checking_names(source) == harness._HOMES
    assert set(harness.__all__) == {*harness._HOMES, "__version__"}
    for name, home in harness._HOMES.items():
        assert getattr(harness, name) is getattr(importlib.import_module(home), name)
    assert set(harness.__all__) <= set(dir(harness))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = harness.no_such_name  # type: ignore[attr-defined]


def test_models_with_model_fields_lift_pydantics_protected_namespace():
    """pydantic before 2.10 warns on stderr, on every command, about a field named `model_...`
    unless its model clears `protected_namespaces` (the declared minimum is older)."""
    from pydantic import BaseModel

    for name in MODULES:
        importlib.import_module(name)
    pending, clashing = list(BaseModel.__subclasses__()), []
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        if not model.__module__.startswith("harness."):
            continue
        fields = [f for f in model.model_fields if f.startswith("model_")]
        if fields and model.model_config.get("protected_namespaces") != ():
            clashing.append(f"{model.__module__}.{model.__qualname__}: {fields}")
    assert not clashing
