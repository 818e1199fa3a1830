"""Writing a table in one of the export formats, atomically (temporary path, then rename)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

FORMATS = {"csv": ".csv", "jsonl": ".jsonl", "parquet": ".parquet", "hf": ""}


def write_frame(frame: pd.DataFrame, format: str, target: Path) -> Path:
    """Write `frame` to `target`; a reader never sees a half-written file or dataset folder."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    _remove(tmp)
    if format == "csv":
        frame.to_csv(tmp, index=False)
    elif format == "jsonl":
        frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
    elif format == "parquet":
        frame.to_parquet(tmp, index=False)
    else:
        from datasets import Dataset

        Dataset.from_pandas(frame, preserve_index=False).save_to_disk(str(tmp))
    if tmp.is_dir():
        _remove(target)
    os.replace(tmp, target)
    return target


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
