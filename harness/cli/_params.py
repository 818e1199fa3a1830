"""Checks of option values at parse time, so a bad value is a usage error before any work starts."""

from __future__ import annotations

import typer

from harness.errors import HarnessError
from harness.judge.cutoff import normalise_cutoff


def check_cutoff(value: str | None) -> str | None:
    """`--cutoff`: YYYY-MM-DD or YYYY (a real date); the text is passed on unchanged. A bad
    value is a one-line error (`error: --cutoff: ...`, exit 2), as the stages say it."""
    if value is None:
        return None

    try:
        normalise_cutoff(value)
    except HarnessError:
        raise HarnessError(
            f"{value!r} is not a date (use YYYY-MM-DD or YYYY)", column="--cutoff"
        ) from None
    return value


def check_positive(value: float | None) -> float | None:
    """Rates and timeouts: above zero."""
    if value is not None and not value > 0:
        raise typer.BadParameter(f"{value:g} is not above 0")
    return value
