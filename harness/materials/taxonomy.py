"""The field taxonomy (OpenAlex domains and fields) and the distance between two fields."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ValidationError

from harness.defaults import materials_dir
from harness.errors import HarnessError
from harness.materials._yaml import first_error, load_yaml

TAXONOMY_FILE = "taxonomy.yaml"

# Taxonomy distance: the coarsest level at which two fields differ.
SAME_SUBFIELD, SAME_FIELD, SAME_DOMAIN, OTHER_DOMAIN = 0, 1, 2, 3


class Domain(BaseModel):
    id: int
    name: str


class Field(BaseModel):
    id: int
    domain: int
    name: str
    description: str


class Taxonomy(BaseModel):
    source: str
    domains: list[Domain]
    fields: list[Field]

    @cached_property
    def _by_name(self) -> dict[str, Field]:
        return {f.name.casefold(): f for f in self.fields}

    def field(self, name: str) -> Field | None:
        return self._by_name.get(name.strip().casefold())

    def known_field(self, name: str) -> Field:
        """The field of a topic the loader has checked against this taxonomy."""
        found = self.field(name)
        if found is None:
            raise KeyError(f"field {name!r} is not in the taxonomy")
        return found

    def domain_name(self, domain_id: int) -> str:
        return next(d.name for d in self.domains if d.id == domain_id)

    def distance(self, a: Field, b: Field, subfield_a: str = "", subfield_b: str = "") -> int:
        """0 same subfield < 1 same field < 2 same domain < 3 different domain."""
        if a.domain != b.domain:
            return OTHER_DOMAIN
        if a.id != b.id:
            return SAME_DOMAIN
        same_sub = subfield_a and subfield_a.casefold() == subfield_b.casefold()
        return SAME_SUBFIELD if same_sub else SAME_FIELD


def load_taxonomy(path: Path | None = None) -> Taxonomy:
    path = path or materials_dir("topics") / TAXONOMY_FILE
    data = load_yaml(path)
    try:
        return Taxonomy.model_validate(data)
    except ValidationError as error:
        loc, msg = first_error(error)
        raise HarnessError(msg, file=path, column=loc) from None
