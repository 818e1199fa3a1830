"""Lazy re-exports for sub-packages whose names pull heavy libraries (numpy, pydantic models).

`import harness` reaches these packages; re-exporting their names on first use keeps it light
while `from harness.judge import blind` still works. One helper serves every such package.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, api: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module `__getattr__` and `__dir__` for `package` that load `api`'s names (name ->
    defining module) on first use."""

    def __getattr__(name: str) -> Any:
        if name in api:
            return getattr(importlib.import_module(api[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted([*vars(importlib.import_module(package)), *api])

    return __getattr__, __dir__
