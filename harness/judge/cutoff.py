"""The study's publication-date cut-off: fixed by `judge --blind`, reused by `judge --auto`.

Human reviewers read the cut-off on their packets, so once packets are written it is stored
(meta key `cutoff`, manifest section `cutoff`) and every later run of the judge stage uses it:
human and automated reviewers then judge "previously published" against the same date.
"""

from __future__ import annotations

import re

from harness.errors import HarnessError
from harness.literature.base import parse_cutoff
from harness.study.clock import utc_now
from harness.study.manifest import record_section
from harness.study.manifest_sections import Cutoff
from harness.study.store import Study

__all__ = ["normalise_cutoff", "settle_cutoff", "store_cutoff", "stored_cutoff"]

META_KEY = "cutoff"
NONE = "none"  # stored when packets were made without a cut-off
_FORMAT = re.compile(r"\d{4}(-\d{2}-\d{2})?")


def normalise_cutoff(value: str | None) -> str | None:
    """`YYYY` (= 31 December of that year) or `YYYY-MM-DD`, as `YYYY-MM-DD`; None stays None."""
    if value is None:
        return None

    text = str(value).strip()
    if not _FORMAT.fullmatch(text):
        raise HarnessError(
            f"cut-off {text!r} is not a date (use YYYY-MM-DD or YYYY)", column="--cutoff"
        )
    return str(parse_cutoff(text))  # a date: the text is not empty


def stored_cutoff(study: Study) -> tuple[bool, str | None]:
    """(whether the study stores a cut-off, the date or None for "no cut-off")."""
    value = study.meta(META_KEY)
    if value is None:
        return False, None
    return True, None if value == NONE else value


def settle_cutoff(study: Study, asked: str | None) -> str | None:
    """The cut-off to use: the stored one; `asked` (normalised) only if it equals it."""
    asked = normalise_cutoff(asked)
    stored, value = stored_cutoff(study)
    if not stored or asked is None or asked == value:
        return value if stored else asked
    raise HarnessError(
        f"--cutoff {asked} differs from the cut-off stored in the study by `judge --blind` "
        f"({value or 'none'}); omit --cutoff to use the stored one",
        column="--cutoff",
    )


def store_cutoff(study: Study, value: str | None) -> None:
    """Fix the cut-off the packets state (once; a stored one is never changed)."""
    if stored_cutoff(study)[0]:
        return
    study.set_meta(META_KEY, value or NONE)
    record_section(
        study.path, "cutoff", Cutoff(date=value, stored_at=utc_now(), by="judge --blind")
    )
