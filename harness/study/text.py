"""Text from models and servers as the store can hold it.

Python strings may carry lone surrogates (a JSON `"\\ud800"` decodes to one), which UTF-8 and so
SQLite cannot hold. They are written as the visible escape `\\ud800`, the form Python's
`backslashreplace` gives; every other character, non-characters and control characters included,
is stored as it is.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str | None) -> str | None:
    """`text` with each lone surrogate replaced by its `\\uXXXX` escape (None stays None)."""
    if text is None or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
