"""A test double of the model Backend interface, and a reviewer who fills packets with openpyxl."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from harness.models.base import ChatRequest, Completion, GenerationParams, ModelAPI


class ScriptedBackend(ModelAPI):
    """Answers each request with `answer(prompt)`; keys in `fail` fail; yields in reverse order."""

    name = "scripted"

    def __init__(
        self,
        model: str = "scripted-1",
        answer: Callable[[str], str] | None = None,
        fail: set[str] | None = None,
        finish_reason: str = "stop",
    ) -> None:
        self.model = model
        self.answer = answer or (lambda prompt: "Combines A with B to do C.")
        self.fail = fail or set()
        self.finish_reason = finish_reason
        self.seen: list[tuple[str, list[dict[str, str]], GenerationParams]] = []

    def complete(
        self, requests: Sequence[ChatRequest], params: GenerationParams
    ) -> Iterator[Completion]:
        for request in reversed(list(requests)):
            self.seen.append((request.key, request.messages, params))
            failed = request.key in self.fail
            yield Completion(
                key=request.key,
                sample=0,
                text=None if failed else self.answer(request.messages[-1]["content"]),
                finish_reason=None if failed else self.finish_reason,
                prompt_tokens=10,
                completion_tokens=5,
                model_reported=f"{self.model}-reported",
                system_fingerprint=None,
                latency_s=0.0,
                attempts=1,
                error="server said no" if failed else None,
                started_at="2026-01-01T00:00:00Z",
                finished_at="2026-01-01T00:00:01Z",
                cost_usd=None,
            )


# -- a reviewer -----------------------------------------------------------------------------------
Verdict = Callable[[str], tuple[str, int, str]]  # item_id -> (verdict, confidence, prior work)


def default_verdict(item_id: str) -> tuple[str, int, str]:
    if item_id[-1] in "ABCDEFGH":
        return "published", 4, f"https://doi.org/10.1234/{item_id.lower()}"
    return "not_published", 3, ""


def fill_workbook(
    path: Path,
    out: Path,
    verdict: Verdict = default_verdict,
    searches_per_item: int = 2,
    skip: set[str] | None = None,
    searched: datetime = datetime(2026, 1, 5),
) -> list[str]:
    """Open a packet as a reviewer would, answer every item, record searches (the n-th of an
    item on `searched` + n days), save to `out`."""
    from openpyxl import load_workbook

    wb = load_workbook(path)
    items, searches = wb["Items"], wb["Searches"]
    ids = []
    for row in range(2, items.max_row + 1):
        label = items.cell(row, 1).value
        if not label or "continued" in label or label in (skip or set()):
            continue
        ids.append(label)
        v, conf, prior = verdict(label)
        items.cell(row, 4).value = v
        items.cell(row, 5).value = conf
        items.cell(row, 6).value = prior or None
        items.cell(row, 7).value = "checked two databases"
    r = 2
    for item_id in ids:
        for n in range(searches_per_item):
            values = [
                item_id,
                ("Google Scholar", "PubMed")[n % 2],
                f'"{item_id}" AND idea {n}',
                "2000-2024",
                searched + timedelta(days=n),
                120 + n,
                f"10.1234/{item_id.lower()}" if n == 0 else None,
            ]
            for col, value in enumerate(values, start=1):
                searches.cell(r, col).value = value
            r += 1
    wb.save(out)
    return ids


def read_items_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def fill_csv_pair(
    folder: Path,
    out: Path,
    *,
    verdict: Verdict = default_verdict,
    bom: bool = True,
    newline: str = "\r\n",
    delimiter: str = ",",
    quote_all: bool = False,
) -> list[str]:
    """Fill items.csv and searches.csv as a spreadsheet program would save them."""
    header, rows = read_items_csv(folder / "items.csv")
    col = {name: i for i, name in enumerate(header)}
    ids = []
    for row in rows:
        if re.search(r"continued", row[col["item_id"]]):
            continue
        v, conf, prior = verdict(row[col["item_id"]])
        row[col["verdict"]], row[col["confidence"]] = v, str(conf)
        row[col["prior_work"]], row[col["notes"]] = prior, "ok"
        ids.append(row[col["item_id"]])
    searches = [["item_id", "database", "query", "filters", "date", "total_hits", "relevant_ids"]]
    searches += [[i, "OpenAlex", f"{i} idea", "", "2026-01-07", "1,204", ""] for i in ids]
    out.mkdir(parents=True, exist_ok=True)
    quoting = csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL
    for name, table in (("items.csv", [header, *rows]), ("searches.csv", searches)):
        with open(out / name, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
            csv.writer(
                handle, lineterminator=newline, delimiter=delimiter, quoting=quoting
            ).writerows(table)
    return ids
