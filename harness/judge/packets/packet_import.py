"""Importing returned packets: validate everything, report every problem, store all or nothing.

`import_reviews(study, files)` reads each .xlsx (or items.csv with its searches.csv), checks it
against the study (its id, the reviewer, the reviewer's assignments) and the rules of the codebook
and search protocol (`harness.judge.packets.packet_check`), and only when no file has a problem stores the
reviews and search records in one transaction. The same file again changes nothing; a different
file for a reviewer who already has one replaces it only with `replace=True`. Every import's file
hash is kept in `imports`.

After `analyze` unblinded the study, new reviews are refused unless `after_unblinding=True`:
then they are stored marked as post-unblinding reviews (never analysed, counted in the report),
and reviews stored before the unblinding stay exactly as they were.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness.errors import HarnessError
from harness.judge.packets.packet_check import check_source
from harness.judge.packets.packet_read import Problem, csv_kind, read_csv_pair, read_xlsx
from harness.study.clock import utc_now
from harness.study.lock import writes_study
from harness.study.manifest import record_command
from harness.study.store import Study
from harness.study.tables.imports import ImportRecord, current_import, insert_import, mark_replaced
from harness.study.tables.reviews import (
    NewReview,
    delete_imported_reviews,
    insert_reviews,
    verdicts_before_unblinding,
)
from harness.study.tables.searches import NewSearch, delete_imported_searches, insert_searches
from harness.study.unblinding import unblinded_at

if TYPE_CHECKING:
    import sqlite3

    import pandas as pd

    from harness.judge.packets.packet_check import Checked, Search
    from harness.judge.packets.packet_read import Problem, Source
    from harness.study.tables.searches import NewSearch


class ImportProblems(HarnessError):
    """Every problem found in the files of one import; nothing was stored.

    `unfilled`: file -> its item rows, for each file in which no item has a verdict (most likely
    the packet as it was sent rather than the one the reviewer filled in)."""

    def __init__(self, problems: list[Problem], unfilled: Mapping[str, int] | None = None) -> None:
        files = sorted({p.file for p in problems})
        #: the message without the first problem, for a caller that lists the problems
        self.summary = f"{len(problems)} problem(s) in {', '.join(files)}; nothing was imported"
        self.unfilled_files = dict(unfilled or {})
        #: what the summary adds about unfilled files ("" when none)
        self.unfilled = "".join(
            f"; {name} looks unfilled: none of its {n} item(s) has a verdict (is it the packet "
            "as sent, not the one the reviewer returned?)"
            for name, n in sorted(self.unfilled_files.items())
        )
        super().__init__(f"{self.summary}{self.unfilled}. First: {problems[0]}")
        self.problems = problems

    def listing(self, first: int = 5) -> list[str]:
        """Every problem a line, but of an unfilled file, whose problems say one thing (no
        verdict) over and over: its first `first`, then how many more."""
        lines: list[str] = []
        for name in dict.fromkeys(p.file for p in self.problems):
            own = [p for p in self.problems if p.file == name]
            shown = own[:first] if name in self.unfilled_files else own
            lines.extend(str(p) for p in shown)
            if len(own) > len(shown):
                lines.append(f"{name}: ... and {len(own) - len(shown)} more problem(s)")
        return lines


# -- public entry point ---------------------------------------------------------------------------
@writes_study
def import_reviews(
    study: Study,
    files: Sequence[str | Path],
    *,
    replace: bool = False,
    after_unblinding: bool = False,
) -> pd.DataFrame:
    """Validate and store returned packets; returns one row per file (status, counts, hash).

    Raises ImportProblems (a HarnessError listing every problem) when anything is wrong, and a
    HarnessError when the study is unblinded and `after_unblinding` is not given.
    """
    import pandas as pd

    if not files:
        raise HarnessError(
            "give at least one returned packet (.xlsx, or items.csv with searches.csv)",
            column="--import",
        )
    sources, problems = group_sources([Path(f) for f in files])
    checked = []
    for source in sources:
        result = check_source(study, source)
        problems.extend(source.problems)
        if result is not None:
            checked.append(result)
    seen: dict[str, str] = {}
    for c in checked:
        if c.reviewer_id in seen:
            problems.append(
                Problem(
                    c.source.name,
                    f"a second file for reviewer {c.reviewer_id} "
                    f"in one import (also {seen[c.reviewer_id]})",
                )
            )
        seen[c.reviewer_id] = c.source.name
    unblinded = unblinded_at(study)
    late = after_unblinding and unblinded is not None
    plan = (
        []
        if problems
        else [(c, _decide(study, c, replace or late, problems, late)) for c in checked]
    )
    if problems:
        raise ImportProblems(problems, {c.source.name: c.listed for c in checked if c.unfilled})
    if unblinded and not after_unblinding and any(p[1][0] != "unchanged" for p in plan):
        raise HarnessError(
            f"the study was unblinded at {unblinded} (harness analyze): reviews that come in "
            "now cannot enter the preregistered analysis; rerun with --after-unblinding to "
            "store them as post-unblinding reviews, which the report counts apart",
            file=study.path,
        )
    rows = []
    with study.transaction() as conn:
        for c, (status, previous) in plan:
            if status != "unchanged":
                _store(conn, c, previous, study if late else None)
            rows.append(
                {
                    "file": c.source.name,
                    "reviewer": c.reviewer_id,
                    "status": f"{status} after unblinding"
                    if late and status != "unchanged"
                    else status,
                    "reviews": len(c.reviews),
                    "searches": len(c.searches),
                    "searches_before_packet": len(c.early),
                    "sha256": c.source.sha256,
                }
            )
    if any(r["status"] != "unchanged" for r in rows):
        record_command(
            study.path,
            "judge.import",
            {"replace": replace, "after_unblinding": late, "files": rows},
        )
    return pd.DataFrame(rows)


def group_sources(paths: list[Path]) -> tuple[list[Source], list[Problem]]:
    """Each .xlsx is a source; an items CSV pairs with the searches CSV beside it (or the only
    one given)."""

    sources: list[Source] = []
    problems: list[Problem] = []
    items_csv: list[Path] = []
    searches_csv: list[Path] = []
    for path in paths:
        suffix = path.suffix.lower()
        if not path.is_file():
            problems.append(Problem(str(path), "file not found"))
        elif suffix == ".xlsx":
            sources.append(read_xlsx(path))
        elif suffix == ".csv":
            kind = csv_kind(path)
            if kind is None:
                problems.append(
                    Problem(
                        path.name,
                        "not an items or searches CSV of a reviewer "
                        "packet (header row not recognised, or not UTF-8)",
                    )
                )
            (items_csv if kind == "items" else searches_csv if kind else []).append(path)
        else:
            problems.append(
                Problem(path.name, "not an .xlsx or .csv file (save the workbook as Excel .xlsx)")
            )
    lone = len(items_csv) == 1 and len(searches_csv) == 1
    for items_path in items_csv:
        partner = _partner(items_path, searches_csv, lone)
        if isinstance(partner, str):  # "ambiguous"
            problems.append(
                Problem(
                    items_path.name,
                    "several searches CSVs could belong to this "
                    "items CSV; name them alike (alice-items.csv, "
                    "alice-searches.csv) or import each pair on its own",
                )
            )
            continue
        if partner is not None:
            searches_csv.remove(partner)
        sources.append(read_csv_pair(items_path, partner))
    for orphan in searches_csv:
        problems.append(Problem(orphan.name, "searches CSV without its items CSV"))
    return sources, problems


def _partner(
    items_path: Path, searches: list[Path], lone: bool
) -> Path | Literal["ambiguous"] | None:
    """The searches CSV of an items CSV: the one beside it, or the one named alike."""
    beside = [s for s in searches if s.parent == items_path.parent]
    if len(beside) == 1:
        return beside[0]
    named = [s for s in beside if s.name == items_path.name.replace("items", "searches")]
    if named:
        return named[0]
    if beside:
        return "ambiguous"
    return searches[0] if lone else None


# -- storing --------------------------------------------------------------------------------------
def _decide(
    study: Study, c: Checked, replace: bool, problems: list[Problem], late: bool = False
) -> tuple[str, Any]:
    """('imported' | 'replaced' | 'unchanged', previous import id or None). `late`: after the
    unblinding, a file that changes a verdict stored before it is a problem."""

    if late:
        before = verdicts_before_unblinding(study, c.reviewer_id)
        changed = [r.item_id for r in c.reviews if before.get(r.item_id, r.verdict) != r.verdict]
        if changed:
            problems.append(
                Problem(
                    c.source.name,
                    f"changes the verdict of {len(changed)} item(s) reviewed before the "
                    f"unblinding (first {changed[0]}); those reviews stay as they were",
                )
            )

    current = current_import(study, c.reviewer_id, c.round_)
    if current is None:
        return "imported", None
    if current.file_sha256 == c.source.sha256:
        return "unchanged", current.import_id
    if not replace:
        problems.append(
            Problem(
                c.source.name,
                f"reviewer {c.reviewer_id} already has an "
                f"import ({current.file_name}, {current.imported_at}); use --replace to replace it",
            )
        )
        return "refused", current.import_id
    return "replaced", current.import_id


def _store(
    conn: sqlite3.Connection, c: Checked, previous: str | None, late: Study | None = None
) -> None:
    """One checked file's import record, reviews and searches, replacing `previous`.

    `late` (the study, after its unblinding): reviews stored before the unblinding and their
    searches are kept; only the file's reviews of other items are stored (post-unblinding).
    """

    import_id = uuid.uuid4().hex
    now = utc_now()
    reviews, searches = list(c.reviews), list(c.searches)
    if late is not None:
        before = verdicts_before_unblinding(late, c.reviewer_id)
        reviews = [r for r in reviews if r.item_id not in before]
        searches = [s for s in searches if s.item_id not in before]
        if previous is not None:
            delete_imported_reviews(conn, previous, after_unblinding_only=True)
            delete_imported_searches(conn, previous, items={r.item_id for r in reviews})
    elif previous is not None:
        delete_imported_reviews(conn, previous)
        delete_imported_searches(conn, previous)
    insert_import(
        conn,
        ImportRecord(
            import_id,
            c.reviewer_id,
            c.source.name,
            c.source.sha256,
            now,
            len(reviews),
            len(searches),
            c.round_,
        ),
    )
    if previous is not None:
        mark_replaced(conn, previous, by=import_id)
    insert_reviews(
        conn,
        [
            NewReview(
                r.item_id,
                c.reviewer_id,
                r.verdict,
                r.confidence,
                r.prior_work,
                r.notes,
                c.source.kind,
                import_id,
                c.source.sha256,
                now,
            )
            for r in reviews
        ],
    )
    insert_searches(conn, [_search_record(s, c, import_id) for s in searches])


def _search_record(s: Search, c: Checked, import_id: str) -> NewSearch:
    """A returned search row as stored: no interface, parameters or hits (reviewers give ids)."""

    return NewSearch(
        uuid.uuid4().hex,
        s.item_id,
        c.reviewer_id,
        s.database,
        None,
        s.query,
        None,
        json.dumps({"limits": s.filters}) if s.filters else None,
        s.run_at,
        s.total_hits,
        "[]",
        json.dumps(s.relevant_ids),
        dedup_key(s),
        c.source.kind,
        import_id,
    )


def dedup_key(search: Search) -> str:
    """Same database, query and limits -> same key (reviewers often rerun a query)."""

    text = "\n".join(
        [search.database.casefold(), " ".join(search.query.split()), search.filters or ""]
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def problems_by_file(problems: list[Problem]) -> dict[str, list[Problem]]:
    grouped: dict[str, list[Problem]] = defaultdict(list)
    for p in problems:
        grouped[p.file].append(p)
    return dict(grouped)
