"""Checks of option values at parse time, so a bad value is a usage error before any work starts
(`--cutoff`'s, which needs the judge's date rules, is in `_cutoff`)."""

from __future__ import annotations

import typer


def check_positive(value: float | None) -> float | None:
    """Rates and timeouts: above zero."""
    if value is not None and not value > 0:
        raise typer.BadParameter(f"{value:g} is not above 0")
    return value
