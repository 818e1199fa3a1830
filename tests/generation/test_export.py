from __future__ import annotations

import json

import pandas as pd
import pytest

from harness.errors import HarnessError
from harness.export import export_prompts
from harness.generation.generate_stage import generate
from tests.generation.conftest import write_bank


@pytest.fixture(scope="module")
def study(tmp_path_factory, tokenizer):
    root = tmp_path_factory.mktemp("export")
    generate(root / "s", topics=write_bank(root / "bank", 3), pilot=True, tokenizer=tokenizer)
    return root / "s"


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet", "hf"])
def test_export_round_trip(study, fmt, tmp_path):
    path = export_prompts(study, fmt, tmp_path / f"out-{fmt}")
    if fmt == "csv":
        frame = pd.read_csv(path)
    elif fmt == "jsonl":
        frame = pd.DataFrame([json.loads(line) for line in path.read_text().splitlines()])
    elif fmt == "parquet":
        frame = pd.read_parquet(path)
    else:
        from datasets import load_from_disk

        frame = load_from_disk(str(path)).to_pandas()
    assert len(frame) == 9
    assert set(frame["condition"]) == {"single_a", "single_b", "cross"}
    assert (
        frame.loc[frame["prompt_id"] == "t000.cross", "text"]
        .iloc[0]
        .startswith(("Consider", "Research brief", "What could"))
    )


def test_unknown_format(study):
    with pytest.raises(HarnessError, match="unknown format"):
        export_prompts(study, "xls")
