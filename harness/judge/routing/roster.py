"""The reviewer roster: who judges the blinded items, with what expertise and capacity.

A roster is a YAML file (`judging/roster.example.yaml`); it is copied into the `reviewers` table
when items are routed, and cannot change once assignments exist.
"""

from __future__ import annotations

from collections.abc import Callable
from difflib import get_close_matches
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.defaults import materials_dir
from harness.errors import HarnessError
from harness.judge.judge_defaults import DEMO_ROSTER, EXAMPLE_ROSTER
from harness.literature.review_methods import METHODS, choices, split_method
from harness.materials._yaml import first_error, load_yaml_items
from harness.materials.taxonomy import load_taxonomy
from harness.models.providers import ModelSpec, closest_name, resolve_model
from harness.study.store import Study
from harness.study.tables.assignments import count_assignments
from harness.study.tables.reviewers import ReviewerRow, replace_reviewers, roster_rows

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class Reviewer(BaseModel):
    """One reviewer: a person who fills a packet, or an automated method."""

    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=())

    id: str = Field(pattern=ID_PATTERN)
    kind: Literal["human", "automated"]
    method: str | None = None
    expertise: tuple[str, ...] = ()
    capacity: int = Field(ge=1)
    # adjudicators judge only the gold sample's items (careful reviewers; see plan `adjudication`)
    role: Literal["primary", "adjudicator"] = "primary"

    @model_validator(mode="after")
    def _method_fits_kind(self) -> Reviewer:
        if self.kind == "human" and self.method is not None:
            raise ValueError("method is for automated reviewers only")
        if self.kind == "automated" and split_method(self.method or "") is None:
            need = f"automated reviewers need method: {choices()}"
            near = _near_method(self.method or "")
            if near is not None:
                need = f"unknown method {self.method!r}: did you mean `method: {near}`? ({need})"
            raise ValueError(need)
        return self


def _near_method(method: str) -> str | None:
    """The method a misspelt one means (`retreival` -> `retrieval`, `lm:MODEL` ->
    `llm:MODEL`, an argument dropped or added as the method takes one or none), else None."""
    name, _, argument = method.partition(":")
    near = closest_name(name.strip(), list(METHODS))
    if near is None:
        return None
    found = METHODS[near]
    if found.argument is None:
        return near
    return f"{near}:{argument.strip() or found.argument}"


class Roster(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    reviewers: list[Reviewer] = Field(min_length=1)

    def get(self, reviewer_id: str) -> Reviewer | None:
        return next((r for r in self.reviewers if r.id == reviewer_id), None)

    @property
    def humans(self) -> list[Reviewer]:
        return [r for r in self.reviewers if r.kind == "human"]

    def with_role(self, role: str) -> Roster:
        """The reviewers of one role (may be empty, unlike a roster read from a file)."""
        return Roster.model_construct(reviewers=[r for r in self.reviewers if r.role == role])


def reviewer_model(reviewer_id: str, method: str, backend: str | None = None) -> ModelSpec:
    """The model of an `llm:MODEL` reviewer, read by the one resolver of every stage
    (`harness.models.providers.resolve_model`): `MODEL` is a provider string
    (`llm:openai/gpt-4o-mini`, `llm:local`); the older `llm:NAME` with `--backend B` still works
    with a deprecation note. Errors name the reviewer and the roster line to write."""
    try:
        return _llm_spec(reviewer_id, method, backend)
    except HarnessError as error:
        raise HarnessError(
            f"reviewer {reviewer_id!r} (method: {method}): {error.message}; in a roster already "
            "routed, --backend PROVIDER (e.g. --backend openai) names the provider instead"
        ) from None


def _llm_spec(reviewer_id: str, method: str, backend: str | None) -> ModelSpec:
    """The model a method's argument names (`llm:MODEL`; an empty one: the embedded model)."""
    prefix, _, name = method.partition(":")
    name = name.strip()
    if name in ("", "embedded", "local"):
        return ModelSpec("local", None)
    given = f"method: {prefix}:{name}" + (f" with --backend {backend}" if backend else "")
    return resolve_model(
        name,
        backend,
        spell=lambda text: f"method: {prefix}:{text}",
        old=f"reviewer {reviewer_id!r}: {given}",
    )


def example_roster_path() -> Path:
    return materials_dir("judging") / EXAMPLE_ROSTER


def demo_roster_path() -> Path:
    return materials_dir("judging") / DEMO_ROSTER


def load_roster(path: str | Path) -> Roster:
    """Read and check a roster file; every error names the file, the entry's line and the field."""
    path = Path(path)
    data, lines = load_yaml_items(path, "reviewers")
    if not isinstance(data, dict) or not isinstance(data.get("reviewers"), list):
        raise HarnessError("a roster is a mapping with a list `reviewers:`", file=path)

    def line(index: int) -> int | None:
        return lines[index] if index < len(lines) else None

    try:
        roster = Roster.model_validate(data)
    except ValidationError as error:
        loc, msg = first_error(error)
        parts = loc.split(".")
        if len(parts) >= 2 and parts[0] == "reviewers" and parts[1].isdigit():
            field = ".".join(parts[2:]) or None
            raise HarnessError(msg, file=path, row=line(int(parts[1])), column=field) from None
        raise HarnessError(msg, file=path, column=loc) from None
    return _checked(roster, path, line)


def _checked(roster: Roster, path: Path, line: Callable[[int], int | None]) -> Roster:
    """Unique ids; expertise names from the field taxonomy (spelled as the taxonomy spells them)."""
    taxonomy = load_taxonomy()
    names = [f.name for f in taxonomy.fields]
    seen: set[str] = set()
    fixed = []
    for index, reviewer in enumerate(roster.reviewers):
        if reviewer.id in seen:
            raise HarnessError(
                f"duplicate reviewer id {reviewer.id!r}", file=path, row=line(index), column="id"
            )
        seen.add(reviewer.id)
        named = split_method(reviewer.method or "")
        if named is not None and named[0].needs_model:
            _check_llm(reviewer, path, line(index))
        canonical = []
        for name in reviewer.expertise:
            found = taxonomy.field(name)
            if found is None:
                near = get_close_matches(name, names, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise HarnessError(
                    f"unknown field {name!r}{hint}; use names from topics/taxonomy.yaml",
                    file=path,
                    row=line(index),
                    column="expertise",
                )
            canonical.append(found.name)
        fixed.append(reviewer.model_copy(update={"expertise": tuple(dict.fromkeys(canonical))}))
    return Roster(reviewers=fixed)


def _check_llm(reviewer: Reviewer, path: Path, row: int | None) -> None:
    """An `llm:` reviewer's model, read as `judge --auto` reads it, when the roster is loaded:
    before anything is written, not after the items are routed. A bare name is refused here
    (no `--backend` reaches a new roster); a bare local path passes with its deprecation note."""
    method = reviewer.method or ""
    try:
        _llm_spec(reviewer.id, method, None)
    except HarnessError as error:
        raise HarnessError(
            f"reviewer {reviewer.id!r} (method: {method}): {error.message}",
            file=path,
            row=row,
            column="method",
        ) from None


def stored_roster(study: Study) -> Roster | None:
    """The roster held in the study store, or None when none was stored yet."""
    rows = roster_rows(study)
    if not rows:
        return None
    return Roster(
        reviewers=[
            Reviewer(
                id=r.reviewer_id,
                kind=r.kind,
                method=r.method,
                expertise=tuple(r.expertise),
                capacity=r.capacity,
                role=r.role,
            )
            for r in rows
        ]
    )


def store_roster(study: Study, roster: Roster, *, source: str | Path | None = None) -> None:
    """Write the roster into `reviewers`; refused when it differs from a roster already routed."""
    stored = stored_roster(study)
    if count_assignments(study):
        if stored is None or _key(stored) != _key(roster):
            raise HarnessError(
                "items are already routed to the stored roster; a different roster cannot be "
                "used in this study",
                file=source,
            )
        return
    rows = [
        ReviewerRow(r.id, r.kind, r.method, list(r.expertise), r.capacity, r.role)
        for r in roster.reviewers
    ]
    with study.transaction() as conn:
        replace_reviewers(conn, rows)


def _key(roster: Roster) -> list[tuple[str, str, str | None, tuple[str, ...], int, str]]:
    return sorted(
        (r.id, r.kind, r.method, tuple(r.expertise), r.capacity, r.role) for r in roster.reviewers
    )
