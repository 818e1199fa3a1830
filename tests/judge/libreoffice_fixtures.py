"""Packets saved by LibreOffice Calc: how the fixtures in `fixtures/` were made, and the study
their tests rebuild.

Run `python -m tests.judge.libreoffice_fixtures` (needs `soffice` on PATH) to remake them: it
builds a small study, fills the packet as a reviewer would (openpyxl) and lets LibreOffice
re-save it (`soffice --headless --convert-to ...`), which rewrites every part of the file the
way LibreOffice saves it. Item ids and the study id are random, so the tests rebuild a study of
the same shape and give it the ids written in the fixtures (`adopt_ids`); after remaking
them, update STUDY_ID and IDS in `test_sheets_libreoffice.py`.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from datetime import date, datetime
from pathlib import Path
from typing import Any

from tests.plans import primary_only_plan

FIXTURES = Path(__file__).parent / "fixtures"
FILLED, UNFILLED = "libreoffice_filled.xlsx", "libreoffice_unfilled.xlsx"
CSV_DIR = "libreoffice_csv"  # items.csv and searches.csv, opened and saved by Calc
ROSTER = "reviewers:\n  - {id: ann, kind: human, expertise: [], capacity: 20}\n"
VERDICTS = ("published", "not_published", "unsure")
# Search dates as a reviewer enters them: date cells (with and without a time) and ISO text.
DATES: tuple[Any, ...] = (
    datetime(2026, 1, 5),
    date(2026, 1, 6),
    "2026-01-07",
    datetime(2026, 1, 8, 14, 30),
    "2026-01-09",
    datetime(2026, 1, 10),
)


def answers(n: int) -> dict[str, Any]:
    """The reviewer's answers for the n-th item of the packet (0-based)."""
    verdict = VERDICTS[n % 3]
    return {
        "verdict": verdict,
        "confidence": 1 + n % 5,
        "prior_work": f"https://doi.org/10.1234/x{n}" if verdict == "published" else None,
        "notes": f"note {n}: café – naïve ≥ “quoted”, comma",
    }


def search(n: int, item_id: str) -> dict[str, Any]:
    """The one search recorded for the n-th item."""
    return {
        "item_id": item_id,
        "database": ("Google Scholar", "PubMed", "OpenAlex")[n % 3],
        "query": f'"{item_id}" AND idea {n}',
        "filters": "2000-2024" if n % 2 else None,
        "date": DATES[n % len(DATES)],
        "total_hits": 120 + 1000 * n,
        "relevant_ids": f"10.1234/x{n}; https://example.org/p{n}" if n % 3 == 0 else None,
    }


def build_study(path: Path) -> Any:
    """Two topics (six items, one with text long enough for continuation rows, some that look
    like formulas), blinded to the single human reviewer `ann`."""
    from harness.judge.blinding.blind_stage import blind
    from harness.study.store import Study
    from tests.judge.conftest import SPECIAL, fill_study
    from tests.judge.fakes import ScriptedBackend

    study = fill_study(path, n_topics=2, pilot=True)
    with study.transaction() as conn:
        for output_id, text in SPECIAL.items():
            conn.execute("UPDATE outputs SET text = ? WHERE output_id = ?", (text, output_id))
    study.close()
    roster = path.parent / "roster.yaml"
    roster.write_text(ROSTER, encoding="utf-8")
    blind(
        path,
        reviewers=roster,
        k=1,
        distinct_topics=False,
        normalise=False,
        seed=11,
        plan=primary_only_plan(path.parent),
        backend=ScriptedBackend(answer=lambda prompt: "+Combines one method with another."),
    )
    return Study.open(path)


def adopt_ids(study: Any, study_id: str, item_ids: list[str]) -> None:
    """Give the study the fixture's study id, and ann's items (in packet order) its item ids."""
    old = [
        r[0]
        for r in study.rows(
            "SELECT item_id FROM assignments WHERE reviewer_id = 'ann' ORDER BY position"
        )
    ]
    assert len(old) == len(item_ids), "the rebuilt study no longer matches the fixtures"
    with study.transaction() as conn:
        conn.execute("PRAGMA defer_foreign_keys = ON")
        conn.execute("UPDATE meta SET value = ? WHERE key = 'study_id'", (study_id,))
        for before, after in zip(old, item_ids, strict=True):
            conn.execute("UPDATE items SET item_id = ? WHERE item_id = ?", (after, before))
            conn.execute("UPDATE assignments SET item_id = ? WHERE item_id = ?", (after, before))


# -- making the fixtures (needs LibreOffice) ------------------------------------------------------
def _fill_xlsx(packet: Path, out: Path) -> None:
    from openpyxl import load_workbook

    wb = load_workbook(packet)
    items, searches = wb["Items"], wb["Searches"]
    rows = [
        r
        for r in range(2, items.max_row + 1)
        if items.cell(r, 1).value and "continued" not in items.cell(r, 1).value
    ]
    for n, r in enumerate(rows):
        for col, value in enumerate(answers(n).values(), start=4):
            items.cell(r, col).value = value
        for col, value in enumerate(search(n, items.cell(r, 1).value).values(), start=1):
            searches.cell(2 + n, col).value = value
    wb.save(out)


def _fill_csv_in_calc(packet_dir: Path, work: Path, soffice: str) -> None:
    """Open items.csv and searches.csv in Calc, type the answers, save both as CSV again."""
    from openpyxl import load_workbook

    for name in ("items.csv", "searches.csv"):
        shutil.copy(packet_dir / name, work / name)
    _soffice(
        soffice,
        work,
        "--infilter=CSV:44,34,76,1",
        "--convert-to",
        "xlsx",
        "items.csv",
        "searches.csv",
    )
    wb = load_workbook(work / "items.xlsx")
    ws = wb.active
    col = {c.value: c.column for c in ws[1]}
    ids = []
    for r in range(2, ws.max_row + 1):
        item_id = ws.cell(r, col["item_id"]).value
        if item_id and "continued" not in item_id:
            for key, value in answers(len(ids)).items():
                ws.cell(r, col[key]).value = value
            ids.append(item_id)
    wb.save(work / "items.xlsx")
    wb = load_workbook(work / "searches.xlsx")
    ws = wb.active
    for n, item_id in enumerate(ids):
        for c, value in enumerate(search(n, item_id).values(), start=1):
            ws.cell(2 + n, c).value = value
            if c == 5 and not isinstance(value, str):
                ws.cell(2 + n, c).number_format = "YYYY-MM-DD"  # as Calc formats a typed date
    wb.save(work / "searches.xlsx")
    out = FIXTURES / CSV_DIR
    out.mkdir(parents=True, exist_ok=True)
    _soffice(
        soffice,
        work,
        "--convert-to",
        "csv:Text - txt - csv (StarCalc):44,34,76,1",
        "--outdir",
        str(out),
        "items.xlsx",
        "searches.xlsx",
    )


def _soffice(soffice: str, cwd: Path, *args: str) -> None:
    subprocess.run(
        [soffice, "--headless", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={"HOME": str(cwd), "PATH": "/usr/bin:/bin"},
    )


def main() -> None:
    soffice = shutil.which("soffice")
    if soffice is None:
        raise SystemExit("soffice (LibreOffice) is not on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        build_study(work / "study").close()
        packet = work / "study" / "packets" / "ann"
        shutil.copy(packet / "ann.xlsx", work / "unfilled.xlsx")
        _fill_xlsx(packet / "ann.xlsx", work / "filled.xlsx")
        _soffice(
            soffice, work, "--convert-to", "xlsx", "--outdir", "lo", "filled.xlsx", "unfilled.xlsx"
        )
        for name, target in (("filled.xlsx", FILLED), ("unfilled.xlsx", UNFILLED)):
            shutil.copy(work / "lo" / name, FIXTURES / target)
        _fill_csv_in_calc(packet, work, soffice)


if __name__ == "__main__":
    main()
