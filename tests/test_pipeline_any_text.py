"""Any text a model can return, driven through every stage by the real CLI (property-based).

A hostile loopback server answers each prompt with text drawn by hypothesis (any code point:
non-characters, lone surrogates, control characters, empty strings, 100 KB texts). The texts go
through `collect`, `judge --blind` (whose control items the same server writes, with a lone
surrogate and non-characters in them), the xlsx and CSV packets, a reviewer who copies them into
the notes column, `judge --import`, `harness export` and `harness explore`. Checked: the store
holds each text losslessly (lone surrogates as their visible escape), packets show what XML 1.0
cannot carry as U+FFFD and everything else as it is, imports store what the reviewer wrote,
exports and the explorer's data equal the store.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import shutil
import threading
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.study.store import Study
from tests.collection.conftest import make_study
from tests.plans import primary_only_plan
from tests.servers.openai_server import OpenAIServer

ANY = st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF)
SPECIAL = [
    "",
    "\ufffe\uffff",
    "lone \ud800 surrogate",
    "\udfff\ud800",
    "\x00\x07\x1b[31m\x7f",
    '=HYPERLINK("http://x")',
    "a\r\nb\rc\n",
    "_x0041_ and _x000D_",
    " \u2028\u2029\ufeff ",
    "\U0001f600" * 3,
    "x" * 100_000,
]
# One plain text besides: an all-blank draw would leave nothing to blind (blank outputs are
# skipped); at most six texts, so that the two topics' six prompts use every one.
TEXTS = st.lists(
    st.one_of(st.sampled_from(SPECIAL), st.text(ANY, max_size=40)), min_size=0, max_size=5
).map(lambda texts: [*texts, "A plain idea."])
ROSTER = """reviewers:
  - {id: ann, kind: human, expertise: [], capacity: 20}
  - {id: ben, kind: human, expertise: [], capacity: 20}
"""
# Control items whose texts the model under test writes (the hostile server answers their
# prompts with CONTROL_TEXT): one published and one unpublished combination.
CONTROLS = """controls:
  - statement: "Combines spin glasses with networks of neurons so that memories are stable states."
    expected: published
    kind: cross
    concepts: [spin glass models, associative memory]
    fields: [Physics and Astronomy, Neuroscience]
    evidence: {title: "Neural networks and physical systems", year: 1982}
  - statement: "Uses a deep network on sequence alignments to predict protein structures."
    expected: not_published
    kind: cross
    concepts: [deep neural networks, protein structure prediction]
    fields: [Computer Science, "Biochemistry, Genetics and Molecular Biology"]
    evidence: {title: "Highly accurate protein structure prediction", year: 2021}
"""
CONTROL_TEXT = (
    "A control \ud800 idea \ufffe\uffff with a bell \x07 and \udfff: spin glass models with "
    "associative memory, deep neural networks with protein structure prediction."
)
# What XML 1.0 cannot carry (the complement of its Char production): packets show U+FFFD.
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
PART = re.compile(r"^\[part \d+/\d+\] | \[continues in part \d+/\d+ below\]$")


def escaped(text: str) -> str:
    """The store's form of a text: each lone surrogate as its visible `\\uXXXX` escape."""
    return "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in text)


class Replies:
    """The hostile server's answers: prompt text -> the text drawn for it."""

    def __init__(self) -> None:
        self.by_prompt: dict[str, str] = {}
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        with self.lock:  # any other prompt asks for a control item's text
            return self.by_prompt.get(body["messages"][-1]["content"], CONTROL_TEXT)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("any-text")
    make_study(root / "study", 2)
    (root / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    (root / "controls.yaml").write_text(CONTROLS, encoding="utf-8")
    return root


def cli(*args: str) -> tuple[int, str, str]:
    """`harness ARGS` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as stop:
            code = int(stop.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.filterwarnings("ignore")
def test_any_text_survives_every_stage(template: Path, tmp_path_factory, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    replies = Replies()
    with OpenAIServer(reply_text=replies) as server:

        @settings(
            max_examples=20,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(TEXTS)
        @example(["a\r\nb\rc\n", "A plain idea."])  # XML readers turn a raw CR into LF
        def run(texts: list[str]) -> None:
            root = tmp_path_factory.mktemp("example")
            study = root / "study"
            shutil.copytree(template / "study", study)
            check_pipeline(study, root, template / "roster.yaml", server.base_url, replies, texts)

        run()


def check_pipeline(
    study: Path, root: Path, roster: Path, url: str, replies: Replies, texts: list[str]
) -> None:
    with Study.open(study) as s:
        prompts = [r["text"] for r in s.rows("SELECT text FROM prompts ORDER BY prompt_id")]
    replies.by_prompt = {p: texts[n % len(texts)] for n, p in enumerate(prompts)}
    code, _, err = cli(
        "collect",
        "--study",
        str(study),
        "--backend",
        "openai",
        "--model",
        "m",
        "--base-url",
        url,
        "--max-attempts",
        "1",
    )
    assert code == 0, err
    with Study.open(study) as s:
        stored = {
            r["text"]: r["output_text"]
            for r in s.rows(
                "SELECT p.text, o.text AS output_text FROM outputs o JOIN prompts p USING "
                "(prompt_id) WHERE o.status = 'ok'"
            )
        }
    assert stored == {p: escaped(t) for p, t in replies.by_prompt.items()}  # lossless

    code, _, err = cli(
        "judge",
        "--blind",
        "--study",
        str(study),
        "--reviewers",
        str(roster),
        "--no-extract",
        "--no-normalise",
        "--no-bank-controls",
        "--controls",
        str(roster.parent / "controls.yaml"),
        "--cutoff",
        "2000",
        "--same-topic",
        "--seed",
        "3",
        "--plan",
        str(primary_only_plan(root)),
    )
    assert code == 0, err
    with Study.open(study) as s:
        shown = {
            r["item_id"]: r["display_text"]
            for r in s.rows("SELECT item_id, display_text FROM items")
        }
        controls = [r["text"] for r in s.rows("SELECT text FROM controls")]
    assert controls == [escaped(CONTROL_TEXT)] * 2  # written by the model, stored losslessly
    assert sorted(shown.values()) == sorted([*(t for t in stored.values() if t.strip()), *controls])
    check_xlsx(study / "packets" / "ann" / "ann.xlsx", shown)
    check_csv(study / "packets" / "ben" / "items.csv", shown)

    notes = {
        **fill_xlsx(study / "packets" / "ann" / "ann.xlsx", root / "ann.xlsx"),
        **fill_csv(study / "packets" / "ben", root / "ben"),
    }
    code, _, err = cli(
        "judge",
        "--import",
        str(root / "ann.xlsx"),
        str(root / "ben" / "items.csv"),
        str(root / "ben" / "searches.csv"),
        "--study",
        str(study),
    )
    assert code == 0, err
    with Study.open(study) as s:
        reviews = {
            (r["reviewer_id"], r["item_id"]): r["notes"]
            for r in s.rows("SELECT reviewer_id, item_id, notes FROM reviews")
        }
    assert reviews == {key: (text.strip() or None) for key, text in notes.items()}

    check_exports(study, stored, reviews, shown)
    check_explorer(study, root / "explorer.html", shown)


def as_packet(text: str) -> str:
    """What a packet shows: U+FFFD where XML cannot hold a character, line breaks as \\n."""
    return NOT_XML.sub("\ufffd", text).replace("\r\n", "\n").replace("\r", "\n")


def packet_texts(rows: list[list[Any]], item_col: int, text_col: int) -> dict[str, str]:
    """Each item's text as a reviewer reads it: continuation rows joined, part markers off."""
    out: dict[str, str] = {}
    last = ""
    for row in rows:
        label = str(row[item_col] or "")
        text = PART.sub("", str(row[text_col] or ""))
        text = PART.sub("", text)
        if label and "continued" not in label:
            last = label
            out[last] = text
        elif last:
            out[last] += text
    return out


def check_xlsx(path: Path, shown: dict[str, str]) -> None:
    sheet = openpyxl.load_workbook(path)["Items"]
    assert [c.value for c in sheet[1]][:2] == ["Item id", "Text"]
    rows = [list(r) for r in sheet.iter_rows(min_row=2, values_only=True)]
    got = packet_texts(rows, 0, 1)
    assert sorted(got) == sorted(shown)
    for item_id, text in got.items():
        assert text == as_packet(shown[item_id]), item_id


def check_csv(path: Path, shown: dict[str, str]) -> None:
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    header = rows[0]
    got = packet_texts(rows[1:], header.index("item_id"), header.index("text"))
    assert sorted(got) == sorted(shown)
    for item_id, text in got.items():
        expected = as_packet(shown[item_id])
        assert text in (expected, "'" + expected), item_id  # "'" keeps a formula a text


def fill_xlsx(packet: Path, out: Path) -> dict[tuple[str, str], str]:
    """A reviewer who pastes each item's first text cell into the notes and searches once."""
    wb = openpyxl.load_workbook(packet)
    items, searches = wb["Items"], wb["Searches"]
    notes = {}
    r = 2
    for row in range(2, items.max_row + 1):
        label = items.cell(row, 1).value
        if not label or "continued" in label:
            continue
        text = str(items.cell(row, 2).value or "")  # columns: id, text, core, verdict, ...
        items.cell(row, 4).value = "not_published"
        items.cell(row, 7).value = text
        items.cell(row, 7).data_type = "s"  # pasted as text, even when it starts with "="
        notes[("ann", label)] = text
        for col, value in enumerate([label, "PubMed", "idea", None, "2026-01-05", 3], start=1):
            searches.cell(r, col).value = value
        r += 1
    wb.save(out)
    return notes


def fill_csv(folder: Path, out: Path) -> dict[tuple[str, str], str]:
    with open(folder / "items.csv", encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    notes, ids = {}, []
    for row in body:
        if "continued" in row[col["item_id"]]:
            continue
        row[col["verdict"]] = "not_published"
        row[col["notes"]] = row[col["text"]]
        notes[("ben", row[col["item_id"]])] = row[col["text"]]
        ids.append(row[col["item_id"]])
    searches = [["item_id", "database", "query", "filters", "date", "total_hits", "relevant_ids"]]
    searches += [[i, "OpenAlex", "idea", "", "2026-01-07", "3", ""] for i in ids]
    out.mkdir()
    for name, table in (("items.csv", [header, *body]), ("searches.csv", searches)):
        with open(out / name, "w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows(table)
    return notes


def check_exports(
    study: Path, stored: dict[str, str], reviews: dict[Any, Any], shown: dict[str, str]
) -> None:
    for table, column, expected in (
        ("outputs", "text", sorted(stored.values())),
        ("reviews", "notes", sorted(map(str, reviews.values()))),
        ("items", "display_text", sorted(shown.values())),  # control items' texts included
    ):
        out = study / "exports" / f"{table}.jsonl"
        code, _, err = cli(
            "export", table, "--study", str(study), "--format", "jsonl", "--out", str(out)
        )
        assert code == 0, err
        lines = out.read_text(encoding="utf-8").split("\n")  # not splitlines: U+2028 is text
        got = [json.loads(line)[column] for line in lines if line]
        assert sorted(map(str, got)) == expected
        out = study / "exports" / f"{table}.csv"
        code, _, err = cli(
            "export", table, "--study", str(study), "--format", "csv", "--out", str(out)
        )
        assert code == 0, err
        with open(out, encoding="utf-8", newline="") as handle:
            got_csv = [r[column] for r in csv.DictReader(io.StringIO(handle.read()))]
        assert sorted(got_csv) == sorted(e if e != "None" else "" for e in expected)


def check_explorer(study: Path, out: Path, shown: dict[str, str]) -> None:
    """The explorer's embedded data (its JSON block and compressed long texts) holds every
    item's text as the store does."""
    import base64
    import gzip

    code, _, err = cli("explore", "--study", str(study), "--out", str(out))
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    data = re.findall(r'<script type="application/json" id="explorer-data">(.*?)</script>', page)
    chunks = re.findall(
        r'<script type="application/octet-stream" id="text-[\w-]+">(.*?)</script>', page
    )
    found: set[str] = set()

    def strings(value: Any) -> None:
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                strings(v)
        elif isinstance(value, list):
            for v in value:
                strings(v)

    strings(json.loads(data[0]))
    for chunk in chunks:
        strings(json.loads(gzip.decompress(base64.b64decode(chunk))))
    missing = [item for item, text in shown.items() if text not in found]
    assert not missing, missing
