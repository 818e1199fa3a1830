"""The explorer page without a browser: blinding of its data, safe embedding, its place beside
the report, and the command."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import shutil

import pytest

from harness.analysis.run import analyze
from harness.explore import write_explorer
from harness.explore.data import page_data
from harness.explore.page import embed_json
from harness.study.store import Study
from harness.study.unblinding import mark_unblinded
from tests.cli_run import run_cli
from tests.records import HOSTILE, add_item_without_output, build_records_study

DATA = re.compile(r'<script type="application/json" id="explorer-data">(.*?)</script>', re.S)
CHUNK = re.compile(
    r'<script type="application/octet-stream" id="text-(\w+)-(\d+)">(.*?)</script>', re.S
)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return build_records_study(tmp_path_factory.mktemp("page") / "s")


def _embedded(page: str) -> tuple[str, dict]:
    found = DATA.findall(page)
    assert len(found) == 1
    return found[0], json.loads(found[0])


def _texts(page: str) -> dict[str, list]:
    """The long-text chunks, decoded as the page decodes them, rows in order."""
    out: dict[str, dict[int, list]] = {}
    for kind, k, data in CHUNK.findall(page):
        assert re.fullmatch(r"[A-Za-z0-9+/=]*", data)
        out.setdefault(kind, {})[int(k)] = json.loads(gzip.decompress(base64.b64decode(data)))
    return {kind: [row for k in sorted(parts) for row in parts[k]] for kind, parts in out.items()}


def test_embedded_json_cannot_end_its_block():
    text = embed_json({"a": HOSTILE, "b": [HOSTILE]})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"a": HOSTILE, "b": [HOSTILE]}


def test_blinded_page_holds_only_what_reviewers_saw(study, tmp_path):
    page = write_explorer(study, tmp_path / "e.html").read_text(encoding="utf-8")
    raw, data = _embedded(page)
    assert data["unblinded_at"] is None
    assert not {"topics", "prompts", "outputs", "item_output"} & set(data)
    with Study.open(study) as s:
        secrets = {
            str(v)
            for row in s.rows(
                "SELECT o.output_id, o.prompt_id, o.model, p.topic_id, p.text, i.original_text "
                "FROM items i JOIN outputs o USING (output_id) JOIN prompts p USING (prompt_id)"
            )
            for v in row
        }
        ids = [r[0] for r in s.rows("SELECT item_id FROM items ORDER BY item_id")]
    texts = _texts(page)
    assert set(texts) == {"items", "search"}
    assert not [v for v in secrets if v in raw or v in json.dumps(texts, ensure_ascii=False)]
    assert [row[0] for row in data["items"]["rows"]] == ids  # ordered by the random ids only
    assert len(data["reviews"]["rows"]) == 24
    assert [len(row[3]) for row in texts["items"]] == [2] * 12  # searches per item
    first = texts["items"][0][3][0]
    assert [h["id"] for h in json.loads(first[6])] and json.loads(first[7]) == [
        json.loads(first[6])[0]["id"]
    ]  # hits and the relevant one
    assert HOSTILE in texts["items"][0][0]


def test_page_is_self_contained_and_escapes_untrusted_text(study, tmp_path):
    page = write_explorer(study, tmp_path / "e.html").read_text(encoding="utf-8")
    assert HOSTILE not in page and "<img" not in page and "<!--" not in page
    n_chunks = len(CHUNK.findall(page))
    assert n_chunks == 2 and page.count("<script") == page.count("</script>") == 2 + n_chunks
    assert not re.search(r'(src|href)="(?!data:)', page.split("<script")[0])
    script = page.rsplit("<script>", 1)[1].split("</script>")[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page and "default-src 'none'" in page


def test_unblinded_page_joins_items_to_outputs(study, tmp_path):
    path = tmp_path / "open"
    shutil.copytree(study, path)
    with Study.open(path) as s:
        mark_unblinded(s)
        data = page_data(s)[0]
        truth = dict(s.rows("SELECT item_id, output_id FROM items"))
    outputs = [row[0] for row in data["outputs"]["rows"]]
    joined = {
        row[0]: outputs[o]
        for row, o in zip(data["items"]["rows"], data["item_output"], strict=True)
    }
    assert joined == truth
    add_item_without_output(path)
    with Study.open(path) as s:
        data = page_data(s)[0]
    ids = [row[0] for row in data["items"]["rows"]]
    assert data["item_output"][ids.index("ctrl-0000")] == -1
    assert {row[2] for row in data["prompts"]["rows"]} == {"single_a", "single_b", "cross"}


def test_analyze_writes_the_explorer_beside_the_report(study, tmp_path):
    path = tmp_path / "analysed"
    shutil.copytree(study, path)
    result = analyze(path)
    assert result.report_files["explorer"] == str(path / "report" / "explorer.html")
    assert '<a href="explorer.html">' in (path / "report" / "report.html").read_text()
    assert "(explorer.html)" in (path / "report" / "report.md").read_text()
    _, data = _embedded((path / "report" / "explorer.html").read_text(encoding="utf-8"))
    assert data["unblinded_at"] and len(data["topics"]["rows"]) == 4


def test_command(study, tmp_path, capsys):
    out = tmp_path / "page.html"
    code, stdout, err = run_cli(capsys, "explore", "--study", str(study), "--out", str(out))
    assert code == 0, err
    assert out.exists() and str(out) in stdout
    code, _, err = run_cli(capsys, "explore", "--study", str(tmp_path / "none"))
    assert code == 2 and "no study here" in err
