"""Hostile reviewer files end in one problem line naming the file, and nothing is stored."""

from __future__ import annotations

import zipfile
from pathlib import Path

from harness.judge.packets import packet_limits as L
from harness.study.store import Study
from tests.judge.fakes import fill_csv_pair
from tests.judge.packets.test_packet_import import filled, problems


def zip_bomb(path: Path, inflated: int) -> Path:
    """An .xlsx-shaped zip whose one sheet inflates to `inflated` bytes of zeros."""
    block = b"\0" * (1 << 20)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as member:
            for _ in range(inflated >> 20):
                member.write(block)
    return path


def test_zip_bomb_is_refused_from_its_directory(blinded: Study, tmp_path: Path) -> None:
    bomb = zip_bomb(tmp_path / "bomb.xlsx", L.MAX_PART_BYTES + (8 << 20))
    assert bomb.stat().st_size < 1_000_000  # small on disk, huge inflated
    found = problems(blinded, [bomb])
    assert len(found) == 1 and found[0].startswith("bomb.xlsx")
    assert "would inflate to" in found[0]


def test_truncated_sheet_xml(blinded: Study, tmp_path: Path) -> None:
    back, _ = filled(blinded, tmp_path)
    cut = tmp_path / "cut.xlsx"
    with zipfile.ZipFile(back) as src, zipfile.ZipFile(cut, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.startswith("xl/worksheets/sheet"):
                data = data[: len(data) // 2]
            dst.writestr(info, data)
    found = problems(blinded, [cut])
    assert found and all(p.startswith("cut.xlsx") for p in found)
    assert any("damaged" in p or "not a readable" in p for p in found)


def test_csv_field_over_the_csv_limit(blinded: Study, tmp_path: Path) -> None:
    fill_csv_pair(blinded.packets_dir / "cat", tmp_path / "back")
    items = tmp_path / "back" / "items.csv"
    text = items.read_text(encoding="utf-8-sig").rstrip("\n")
    items.write_text(text + ',"' + "y" * 200_000 + '"\n', encoding="utf-8")
    found = problems(blinded, [items, tmp_path / "back" / "searches.csv"])
    assert any(p.startswith("items.csv") and "cannot be read as CSV" in p for p in found)
