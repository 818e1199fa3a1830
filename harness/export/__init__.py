"""Export study tables for use elsewhere (spreadsheets, notebooks, `datasets`).

Item-keyed tables (items, assignments, reviews, searches, hits, judgments) hold only what a
reviewer could see until `harness analyze` has unblinded the study; after that they carry each
item's output, prompt, topic, condition, sample, model, model key and configuration label, and a
control item's expected verdict (see `harness.export.tables`). `controls` (one row per judgment
of a control item, with the model that wrote its text where that is known:
`harness.export.control_writers`) is refused until then.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError
from harness.export.tables import TABLES
from harness.export.write import FORMATS, write_frame
from harness.study import Study
from harness.study.tables.views import export_frame
from harness.study.unblinding import unblinded_at

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["export", "export_prompts", "export_table", "read_table"]


def read_table(study: str | Path, table: str) -> pd.DataFrame:
    """One export target as a DataFrame, blinded unless the study has been unblinded."""
    if table not in TABLES:
        raise HarnessError(
            f"unknown table {table!r}; choose one of {', '.join(TABLES)}", column="TABLE"
        )
    with Study.open(study) as s:
        unblinded = unblinded_at(s) is not None
        if TABLES[table].sealed and not unblinded:
            raise HarnessError(
                f"the {table} (which items are controls, and their expected verdicts) are sealed "
                "in the blinding key until `harness analyze` unblinds the study",
                file=study,
            )
        frame = export_frame(s, table, unblinded=unblinded)
        return frame


def export(study: str | Path, table: str, format: str = "csv", out: Path | None = None) -> Path:
    """Write one table of the study as CSV, JSONL, Parquet or a `datasets` folder ("hf")."""
    if format not in FORMATS:
        raise HarnessError(
            f"unknown format {format!r}; choose one of {', '.join(FORMATS)}", column="--format"
        )
    frame = read_table(study, table)
    if frame.empty:
        raise HarnessError(
            f"the study holds no {table} (run `{TABLES[table].filled_by}`)", file=study
        )
    target = Path(out) if out else Path(study) / "exports" / f"{table}{FORMATS[format]}"
    return write_frame(frame, format, target)


#: The name under which `harness` re-exports `export` (the package itself is `harness.export`).
export_table = export


def export_prompts(study: str | Path, format: str = "csv", out: Path | None = None) -> Path:
    """The study's prompts, with the two fields of their topic."""
    return export(study, "prompts", format, out)
