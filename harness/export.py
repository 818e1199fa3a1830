"""Export study tables for use elsewhere (spreadsheets, notebooks, `datasets`)."""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.study import Study

FORMATS = {"csv": ".csv", "jsonl": ".jsonl", "parquet": ".parquet", "hf": ""}


def export_prompts(study: str | Path, format: str = "csv", out: Path | None = None) -> Path:
    if format not in FORMATS:
        raise HarnessError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}",
                           column="--format")
    with Study.open(study) as s:
        frame = s.frame("SELECT p.*, t.field_a, t.field_b FROM prompts p "
                        "JOIN topics t USING (topic_id) ORDER BY p.rowid")
    if frame.empty:
        raise HarnessError("the study holds no prompts (run `harness generate`)", file=study)
    target = out or Path(study) / "exports" / f"prompts{FORMATS[format]}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if format == "csv":
        frame.to_csv(target, index=False)
    elif format == "jsonl":
        frame.to_json(target, orient="records", lines=True, force_ascii=False)
    elif format == "parquet":
        frame.to_parquet(target, index=False)
    else:
        from datasets import Dataset

        Dataset.from_pandas(frame, preserve_index=False).save_to_disk(str(target))
    return target
