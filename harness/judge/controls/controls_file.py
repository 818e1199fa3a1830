"""The controls file: combinations whose answer the researcher knows (`judge --controls`).

A YAML file with a top-level list `controls:` (see `judging/controls.example.yaml` and
docs/file-formats.md). Every entry is checked before anything is written; the first bad entry
stops the run with a one-line error naming the file, the line and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import ErrorDetails

from harness.errors import HarnessError
from harness.materials._yaml import plain_message
from harness.materials.yaml_file import YamlFile, read_yaml_file

LIST_KEY = "controls"


class Evidence(BaseModel):
    """The work that settles the answer: published before the cut-off, or first after it."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())
    title: str = Field(min_length=3)
    year: int = Field(ge=1500, le=2100)
    doi: str | None = None


class ControlEntry(BaseModel):
    """One control as the researcher writes it."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())
    statement: str = Field(min_length=10, max_length=500)
    expected: Literal["published", "not_published"]
    kind: Literal["cross", "single"]
    evidence: Evidence | None = None
    text: str | None = Field(None, min_length=10, max_length=4000)
    concepts: list[str] | None = Field(None, min_length=2, max_length=2)
    fields: list[str] | None = Field(None, min_length=2, max_length=2)
    relation: str | None = Field(None, min_length=3, max_length=200)

    @field_validator("statement", "text")
    @classmethod
    def _stripped(cls, value: str | None) -> str | None:
        return value.strip() if value is not None else None

    @field_validator("concepts", "fields")
    @classmethod
    def _named(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and any(not v.strip() for v in value):
            raise ValueError("a concept or field is empty")
        return [v.strip() for v in value] if value is not None else None


@dataclass(frozen=True)
class FileControl:
    """A validated entry with the line it starts on."""

    entry: ControlEntry
    line: int


def load_controls_file(path: str | Path, cutoff: str | None) -> list[FileControl]:
    """Validated entries; a published control's evidence must predate the cut-off's year and an
    unpublished control's evidence (if any) must come after it."""
    file = read_yaml_file(path, "controls file")
    data = file.data
    if not isinstance(data, dict) or not isinstance(data.get(LIST_KEY), list):
        raise HarnessError(
            f"a controls file needs a top-level list `{LIST_KEY}:`",
            file=file.path,
            row=1,
            column=LIST_KEY,
        )
    out: list[FileControl] = []
    seen: dict[str, int | None] = {}
    for index, raw in enumerate(data[LIST_KEY]):
        at = (LIST_KEY, str(index))
        where = file.line(*at)
        if not isinstance(raw, dict):
            raise HarnessError(
                "a control must be a mapping (statement, expected, kind, evidence)",
                file=file.path,
                row=where,
                column=f"{LIST_KEY}[{index}]",
            )
        entry = file.validate(
            ControlEntry, _message, data=raw, at=at, column=f"{LIST_KEY}[{index}]"
        )
        _check_entry(file, index, entry, cutoff)
        key = entry.statement.casefold()
        if key in seen:
            raise HarnessError(
                f"the same statement as the control on line {seen[key]}",
                file=file.path,
                row=where,
                column=f"{LIST_KEY}[{index}].statement",
            )
        seen[key] = where
        out.append(FileControl(entry, where or 0))
    return out


def _check_entry(file: YamlFile, index: int, entry: ControlEntry, cutoff: str | None) -> None:
    column = f"{LIST_KEY}[{index}]"
    if entry.expected == "published" and entry.evidence is None:
        raise HarnessError(
            "a published control needs evidence (title, year, doi)",
            file=file.path,
            row=file.line(LIST_KEY, str(index)),
            column=f"{column}.evidence",
        )
    if entry.evidence is None or cutoff is None:
        return
    year, cut = entry.evidence.year, int(cutoff[:4])
    wrong = (entry.expected == "published" and year > cut) or (
        entry.expected == "not_published" and year < cut
    )
    if wrong:
        side = "after" if entry.expected == "published" else "before"
        raise HarnessError(
            f"expected {entry.expected}, but the evidence year {year} is {side} the cut-off "
            f"{cutoff}",
            file=file.path,
            row=file.line(LIST_KEY, str(index), "evidence", "year"),
            column=f"{column}.evidence.year",
        )


def _message(detail: ErrorDetails) -> str:
    if detail["type"] == "extra_forbidden":
        return (
            "unknown field (use statement, expected, kind, evidence, text, concepts, "
            "fields, relation)"
        )
    if detail["type"] == "missing":
        return "required field is missing"
    return plain_message(detail)
