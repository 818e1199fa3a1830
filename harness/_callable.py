"""Stage modules that can be called like their main function.

`harness.generate` is both a module and, for users of the Python API, the function that generates
prompts. Importing a submodule rebinds the package attribute to the module, so the package cannot
simply re-export the function under the same name; instead the module itself becomes callable.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any


def make_module_callable(module_name: str, function: Callable[..., Any]) -> None:
    """Make `module_name(...)` call `function(...)`."""

    class _CallableModule(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return function(*args, **kwargs)

    sys.modules[module_name].__class__ = _CallableModule
