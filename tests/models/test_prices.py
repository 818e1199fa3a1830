"""Price table: built-ins, user files, prefix matching, batch discount, bad files."""

from __future__ import annotations

import json

import pytest

from harness.errors import HarnessError
from harness.models.prices import PriceTable


def test_builtin_and_prefix_match():
    table = PriceTable.load()
    assert table.price("gpt-4o-mini").input == 0.15
    # a dated snapshot is priced as its family; the longest prefix wins over "gpt-4o"
    assert table.price("gpt-4o-mini-2024-07-18") == table.price("gpt-4o-mini")
    assert table.price("no-such-model") is None
    assert table.cost("no-such-model", 10, 10) is None
    assert table.cost("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert table.cost("gpt-4o-mini", 1_000_000, 0, batch=True) == pytest.approx(0.075)


def test_user_file_extends_and_overrides(tmp_path, monkeypatch):
    path = tmp_path / "prices.yaml"
    path.write_text("my-model: {input: 1, output: 2}\ngpt-4o-mini: {input: 9, output: 9}\n")
    monkeypatch.setenv("HARNESS_PRICES", str(path))
    table = PriceTable.load()
    assert table.cost("my-model", 1_000_000, 1_000_000) == pytest.approx(3.0)
    assert table.price("gpt-4o-mini").input == 9
    json_path = tmp_path / "p.json"
    json_path.write_text(json.dumps({"x": {"input": 0, "output": 0}}))
    assert PriceTable.load(json_path).cost("x", 5, 5) == 0.0


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("m: {input: 1}\n", "m"),
        ("m: {input: one, output: 2}\n", "m"),
        ("m: {input: -1, output: 2}\n", "negative"),
        ("- just a list\n", "map model names"),
        ("m: {input: [1\n", "cannot parse"),
    ],
)
def test_bad_price_files_name_the_place(tmp_path, text, needle):
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(HarnessError) as caught:
        PriceTable.load(path)
    assert str(path) in str(caught.value) and needle in str(caught.value)
