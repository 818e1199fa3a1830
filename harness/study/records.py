"""The one style of a record: what an object keeps in the manifest, and how it comes back.

A settings or result object that the manifest keeps has `record(self) -> JsonObject`: no
arguments, a fresh dict of JSON values (paths as text, sequences as lists), every field named.
Settings that a later run reads back also have `from_record(cls, record) -> Self`, so that
`type(x).from_record(x.record()) == x`. The manifest's own sections (`manifest_sections`) keep
the same pair.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, Self, runtime_checkable

from pydantic import JsonValue

__all__ = ["JsonObject", "Readable", "Recorded"]

#: One JSON object as the manifest holds it.
JsonObject = dict[str, JsonValue]


@runtime_checkable
class Recorded(Protocol):
    """An object the manifest keeps: `record()` gives its JSON record."""

    def record(self) -> JsonObject: ...


@runtime_checkable
class Readable(Recorded, Protocol):
    """A recorded object that a later run reads back from its record."""

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Self: ...
