"""The export targets: which store view each reads (`harness.study.tables.views.EXPORT_VIEWS`,
blinded and unblinded) and which command fills it.

Item-keyed targets hold only what a reviewer could see until `analyze` has unblinded the study.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.study.tables.views import EXPORT_VIEWS


@dataclass(frozen=True)
class Table:
    name: str
    filled_by: str  # the command that fills the table, for the empty-table message

    @property
    def blinded(self) -> bool:
        """True: item-keyed, gated on unblinding."""
        return EXPORT_VIEWS[self.name].blinded

    @property
    def sealed(self) -> bool:
        """True: sealed in the blinding key, refused until unblinding."""
        return EXPORT_VIEWS[self.name].sealed


_REVIEWED = "harness judge (import or automated reviewers)"

TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        Table("prompts", "harness generate"),
        Table("outputs", "harness collect"),
        Table("items", "harness judge --blind"),
        Table("assignments", "harness judge --blind"),
        Table("reviews", _REVIEWED),
        Table("searches", _REVIEWED),
        Table("hits", _REVIEWED),
        Table("judgments", _REVIEWED),
        Table("controls", "harness judge --blind"),
    )
}
