"""Cross-field prompt harness: matched prompts, model outputs, blinded review, preregistered analysis.

The public Python API is re-exported here lazily, so that `import harness` (and the CLI) stays fast:
heavy libraries load only when a function that needs them is called.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_API = {
    "Study": "harness.study.store",
    "HarnessError": "harness.errors",
    "generate": "harness.generate",
    "load_topic_bank": "harness.materials.topics",
}


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])


__all__ = ["__version__", *_API]
