"""Any text a model can return is stored and can be put in a reviewer packet."""

from __future__ import annotations

import io
import sqlite3

import openpyxl
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.judge.packets.packet_format import clean_text
from harness.study import Study
from harness.study.text import storable
from tests.collection.test_collect import run
from tests.servers import openai_server

HOSTILE = [
    "",
    "\ufffe\uffff",
    "lone \ud800 surrogate",
    "\x00\x07\x1b[31m",
    "=HYPERLINK(1)",
    "x" * 100_000,
    "\udfff\ud800",
]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF)))
def test_any_text_is_storable_and_fits_a_spreadsheet(text: str) -> None:
    stored = storable(text)
    conn = sqlite3.connect(":memory:")
    assert conn.execute("SELECT ?", (stored,)).fetchone()[0] == stored
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        assert stored == text  # lossless when UTF-8 can hold it
    sheet = openpyxl.Workbook()
    sheet.active["A1"] = clean_text(stored or "")
    sheet.save(io.BytesIO())  # raises on anything XML cannot carry


def test_surrogates_are_escaped_visibly() -> None:
    assert storable("a\ud800b\udfffc") == "a\\ud800b\\udfffc"
    assert clean_text("a\ufffeb\x01") == "a\ufffdb\ufffd"


def test_collect_stores_every_hostile_text(study, serve, key, monkeypatch) -> None:
    texts = iter(HOSTILE * 10)
    plain = openai_server.chat_reply

    def hostile(body, serial):
        reply = plain(body, serial)
        for choice in reply["choices"]:
            choice["message"]["content"] = next(texts)
        return reply

    monkeypatch.setattr(openai_server, "chat_reply", hostile)
    result = run(study, serve(), samples=1)
    assert result.failed == 0
    with Study.open(study) as handle:
        stored = [r[0] for r in handle.rows("SELECT text FROM outputs WHERE status = 'ok'")]
        prompts = handle.count("prompts")
    # 12 prompts take the 7 texts in turn: every one arrives, each stored in its storable form
    assert len(stored) == prompts >= len(HOSTILE)
    assert set(stored) == {storable(t) for t in HOSTILE}


def test_status_counts_samples_that_repeat_a_text(study, serve, key, monkeypatch) -> None:
    from harness.status.stage_table import study_status

    plain = openai_server.chat_reply

    def same(body, serial):  # a server that ignores the seed: every sample alike
        reply = plain(body, serial)
        for choice in reply["choices"]:
            choice["message"]["content"] = "The same idea."
        return reply

    monkeypatch.setattr(openai_server, "chat_reply", same)
    run(study, serve(), samples=3)
    collect_row = next(r for r in study_status(study) if r.stage == "collect")
    assert (
        "36 ok" in collect_row.holds
        and "24 repeating an earlier sample's text" in collect_row.holds
    )
