"""`--cutoff` checked at parse time (the judge's date rules), apart from `_params` so that the
commands without a cut-off do not load the judge and the literature sources."""

from __future__ import annotations

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
