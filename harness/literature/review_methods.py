"""The registry of automated reviewer methods: the one table the roster, calibration and
`judge --auto` read. A method is a `ReviewerMethod` record beside its implementation, listed in
`BUILTIN`; `register` adds one at run time (tests, plugins)."""

from __future__ import annotations

from harness.errors import HarnessError
from harness.literature.llm_reviewer import LLM
from harness.literature.reviewer_base import ReviewerMethod
from harness.literature.reviewers import RETRIEVAL, RETRIEVAL_DENSE, RETRIEVAL_HYBRID

__all__ = ["METHODS", "choices", "method_of", "register", "split_method"]

BUILTIN = (RETRIEVAL, RETRIEVAL_DENSE, RETRIEVAL_HYBRID, LLM)
#: method name -> record
METHODS: dict[str, ReviewerMethod] = {m.name: m for m in BUILTIN}


def register(method: ReviewerMethod) -> ReviewerMethod:
    """Add `method` to the registry (a name already taken is refused)."""
    if method.name in METHODS:
        raise ValueError(f"reviewer method {method.name!r} is registered already")
    METHODS[method.name] = method
    return method


def choices() -> str:
    """`retrieval, retrieval-dense, retrieval-hybrid or llm:MODEL`."""
    names = [m.usage for m in METHODS.values()]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


def split_method(method: str) -> tuple[ReviewerMethod, str] | None:
    """(record, argument) of a roster's method, or None when it names no method as it should
    (unknown, an argument missing or one given to a method that takes none)."""
    name, sep, argument = method.partition(":")
    found = METHODS.get(name)
    if found is None or bool(sep) != (found.argument is not None):
        return None
    if found.argument is not None and not argument:
        return None
    return found, argument.strip()


def method_of(method: str) -> ReviewerMethod:
    """The record of a roster's method; an unknown one is a HarnessError naming the choices."""
    found = split_method(method)
    if found is None:
        raise HarnessError(
            f"unknown automated method {method!r} (use {choices()})", column="method"
        )
    return found[0]
