"""The topic bank: matched topics across distant fields, validated against the taxonomy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import HarnessError
from harness.materials._yaml import first_error, load_yaml_items
from harness.materials.taxonomy import OTHER_DOMAIN, TAXONOMY_FILE, Taxonomy


class KnownLink(BaseModel):
    """A published work: an intersection of the topic's two fields (`known_links`) or, in
    `known_within_a` / `known_within_b`, a combination of the two concepts of one field."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())
    title: str = Field(min_length=3)
    year: int = Field(ge=1500, le=2100)
    doi: str | None = None
    venue: str | None = None
    summary: str = Field(min_length=3)
    # the two concepts the work combined (field A's then field B's for `known_links`), stated in
    # its title or summary: the planted pair of its control item (harness/judge/controls/control_sources.py)
    concepts: list[str] | None = None

    @field_validator("concepts")
    @classmethod
    def _link_concepts(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if len(value) != 2:
            raise ValueError(f"a link names exactly 2 concepts, not {len(value)}")
        cleaned = [c.strip() for c in value]
        if any(not c for c in cleaned):
            raise ValueError("a link concept is missing (empty)")
        for concept in cleaned:
            if not 2 <= len(concept.split()) <= 5:
                raise ValueError(f"link concept {concept!r} must have 2-5 words")
        if cleaned[0].casefold() == cleaned[1].casefold():
            raise ValueError("the two concepts of a link must differ")
        return cleaned


class Topic(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64)
    field_a: str
    field_b: str
    subfield_a: str = ""
    subfield_b: str = ""
    concepts_a: list[str] = Field(min_length=2, max_length=2)
    concepts_b: list[str] = Field(min_length=2, max_length=2)
    relation: str = Field(min_length=3)
    known_links: list[KnownLink] = []
    known_within_a: list[KnownLink] = []
    known_within_b: list[KnownLink] = []

    @field_validator("concepts_a", "concepts_b")
    @classmethod
    def _concepts(cls, value: list[str]) -> list[str]:
        cleaned = [c.strip() for c in value]
        if any(not c for c in cleaned):
            raise ValueError("a concept is missing (empty)")
        if cleaned[0].casefold() == cleaned[1].casefold():
            raise ValueError("the two concepts of a field must differ")
        return cleaned


class TopicBank(BaseModel):
    topics: list[Topic]
    files: list[Path] = []
    taxonomy: Taxonomy
    taxonomy_file: Path

    def topic(self, topic_id: str) -> Topic:
        return next(t for t in self.topics if t.id == topic_id)


def file_entries(file: Path) -> list[tuple[int | None, Any, str]]:
    """(line, raw entry, message prefix) of every entry under `topics:` of one bank file."""
    data, lines = load_yaml_items(file, "topics")
    if not isinstance(data, dict) or not isinstance(data.get("topics"), list):
        raise HarnessError("expected a mapping with a 'topics' list", file=file)
    out = []
    for index, raw in enumerate(data["topics"]):
        line = lines[index] if index < len(lines) else None
        tid = raw.get("id") if isinstance(raw, dict) else None
        out.append((line, raw, f"topic {tid}: " if tid else f"topic #{index + 1}: "))
    return out


def validate_entry(raw: Any, tax: Taxonomy, file: Path, line: int | None, prefix: str) -> Topic:
    """One bank entry as a Topic; the first problem found raises HarnessError at file:line."""
    try:
        topic = Topic.model_validate(raw)
    except ValidationError as error:
        loc, msg = first_error(error)
        raise HarnessError(prefix + msg, file=file, row=line, column=loc or None) from None
    _check_fields(topic, tax, file, line, prefix)
    return topic


def _check_fields(topic: Topic, tax: Taxonomy, file: Path, line: int | None, prefix: str) -> None:
    fields = {}
    for key in ("field_a", "field_b"):
        name = getattr(topic, key)
        found = tax.field(name)
        if found is None:
            raise HarnessError(
                prefix + f"field {name!r} is not in the taxonomy ({TAXONOMY_FILE})",
                file=file,
                row=line,
                column=key,
            )
        fields[key] = found
    a, b = fields["field_a"], fields["field_b"]
    if a.id == b.id:
        raise HarnessError(prefix + "field_a equals field_b", file=file, row=line, column="field_b")
    if tax.distance(a, b) != OTHER_DOMAIN:
        raise HarnessError(
            prefix + f"field_a and field_b are both in domain {tax.domain_name(a.domain)!r}; "
            "they must come from different domains",
            file=file,
            row=line,
            column="field_b",
        )
    shared = {c.casefold() for c in topic.concepts_a} & {c.casefold() for c in topic.concepts_b}
    if shared:
        raise HarnessError(
            prefix + f"concept {sorted(shared)[0]!r} appears on both sides",
            file=file,
            row=line,
            column="concepts_b",
        )
