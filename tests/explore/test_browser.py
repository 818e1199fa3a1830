"""The explorer in a real browser: headless Chromium opens it from a file:// URL, a filter is
applied, one item is followed to its searches and hits, and the console stays free of errors."""

from __future__ import annotations

import shutil
from importlib.util import find_spec

import pytest

from harness.explore import write_explorer
from harness.study.store import Study
from harness.study.unblinding import mark_unblinded
from tests.explore.browser import (
    browser_paths,
    chromium,
    console_errors,
    open_page,
    wait_for_text,
)
from tests.records import (
    add_item_without_output,
    build_configurations_study,
    build_records_study,
)

pytestmark = pytest.mark.skipif(
    browser_paths() is None or find_spec("selenium") is None,
    reason="no headless browser: install the Debian packages chromium and chromium-driver "
    "(.ci/run does) and the dev extras (selenium) to run the explorer's browser test",
)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """(blinded page, unblinded page, study) for one small study."""
    root = tmp_path_factory.mktemp("pages")
    study = build_records_study(root / "blind")
    blinded = write_explorer(study, root / "blinded.html")
    shutil.copytree(study, root / "open")
    add_item_without_output(root / "open")
    with Study.open(root / "open") as s:
        mark_unblinded(s)
    return blinded, write_explorer(root / "open", root / "open.html"), study


@pytest.fixture(scope="module")
def browser():
    with chromium() as driver:
        yield driver


def _select(driver, select_id: str, label: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", select_id)).select_by_visible_text(label)


def _expected(study, sql: str) -> int:
    with Study.open(study) as s:
        return int(s.rows(sql)[0][0])


def test_blinded_page_filter_and_follow_an_item_to_its_searches(browser, pages):
    blinded, _, study = pages
    open_page(browser, blinded)
    assert browser.find_element("id", "count").text == "12 items match"
    assert not browser.find_element("id", "l-condition").is_displayed()
    _select(browser, "f-reviewer", "alice (human)")
    _select(browser, "f-verdict", "not_published")
    want = _expected(
        study,
        "SELECT COUNT(*) FROM reviews WHERE reviewer_id = 'alice' AND verdict = 'not_published'",
    )
    assert browser.find_element("id", "count").text == f"{want} items match"
    browser.find_elements("css selector", "#list li")[0].click()
    detail = wait_for_text(browser, "detail", "Searches (2)")
    assert "alice" in detail and "not_published" in detail
    search = browser.find_elements("css selector", "details.search")[0]
    assert not search.find_element("tag name", "table").is_displayed()
    search.find_element("tag name", "summary").click()
    table = search.find_element("tag name", "table")
    assert table.is_displayed() and "Work 0 </script><script>" in table.text
    assert "openalex" in search.text and "query for" in search.text
    assert browser.execute_script("return window.__pwned") is None
    assert console_errors(browser) == []


def test_unblinded_page_topic_to_prompt_output_item_and_hits(browser, pages):
    _, page, study = pages
    open_page(browser, page)
    assert browser.find_element("id", "count").text == "4 topics match"
    _select(browser, "f-condition", "cross")
    _select(browser, "f-model", "openai/model-b")
    assert browser.find_element("id", "count").text == "4 topics match"
    _select(browser, "f-model", "local/test-model")
    assert browser.find_element("id", "count").text == "0 topics match"
    _select(browser, "f-model", "all")
    _select(browser, "f-condition", "all")
    browser.find_element("id", "q").send_keys("t0002")
    wait_for_text(browser, "count", "1 topics match")
    browser.find_elements("css selector", "#list li")[0].click()
    detail = wait_for_text(browser, "detail", "Topic t0002")
    assert "prompt t0002 cross" in detail and detail.count("Blinded item") == 3
    browser.find_elements("css selector", "a.item-link")[0].click()
    wait_for_text(browser, "detail", "condition single_a")
    browser.find_elements("css selector", "details.search summary")[1].click()
    assert "10.1/" in browser.find_elements("css selector", "details.search table")[1].text
    browser.back()
    wait_for_text(browser, "detail", "Topic t0002")
    _select(browser, "f-list", "items")
    assert browser.find_element("id", "count").text == "3 items match"
    assert browser.execute_script("return window.__pwned") is None
    assert console_errors(browser) == []
    browser.get(page.resolve().as_uri() + "#item=ctrl-0000")
    wait_for_text(browser, "detail", "no model output")
    assert console_errors(browser) == []
    browser.execute_script("console.error('probe of the console log')")
    assert any("probe of the console log" in e for e in console_errors(browser))


def test_unblinded_page_shows_accuracy_on_real_items(browser, pages, tmp_path):
    import json

    _, _, study = pages
    folder = tmp_path / "adjudicated"
    shutil.copytree(study, folder)
    with Study.open(folder) as s:
        mark_unblinded(s)
    (folder / "report").mkdir(exist_ok=True)
    row = {
        "label": "rev-a",
        "scope": "reviewer",
        "arm": "cross",
        "published": 4,
        "sensitivity": 0.75,
        "sensitivity_low": 0.19,
        "sensitivity_high": 0.99,
        "unpublished": 6,
        "specificity": 0.5,
        "specificity_low": 0.12,
        "specificity_high": 0.88,
    }
    (folder / "report" / "report.json").write_text(
        json.dumps({"adjudication": {"accuracy": [row]}})
    )
    open_page(browser, write_explorer(folder, tmp_path / "adjudicated.html"))
    detail = wait_for_text(browser, "detail", "Accuracy on the real items")
    assert "rev-a" in detail and "0.75 [0.19, 0.99]" in detail
    assert console_errors(browser) == []


def test_two_configurations_are_two_names_and_the_model_filter_selects_one(browser, tmp_path):
    """The demo's `local#sampled` and `local#greedy`: one model, two configurations, each its
    own name in the filter and on every output, never both `SmolLM2-135M-Instruct`."""
    study = build_configurations_study(tmp_path / "s")
    with Study.open(study) as s:
        mark_unblinded(s)
        greedy = int(s.rows("SELECT COUNT(*) FROM outputs WHERE model_key = 'local#greedy'")[0][0])
    page = write_explorer(study, tmp_path / "open.html")
    open_page(browser, page)
    from selenium.webdriver.support.ui import Select

    names = [o.text for o in Select(browser.find_element("id", "f-model")).options]
    assert names == [
        "all",
        "local#greedy (SmolLM2-135M-Instruct)",
        "local#sampled (SmolLM2-135M-Instruct)",
    ]
    _select(browser, "f-list", "items")
    assert browser.find_element("id", "count").text == "12 items match"
    _select(browser, "f-model", "local#greedy (SmolLM2-135M-Instruct)")
    assert browser.find_element("id", "count").text == f"{greedy} items match"
    browser.find_elements("css selector", "#list li")[0].click()
    detail = wait_for_text(browser, "detail", "model local#greedy")
    assert "local#sampled" not in detail
    _select(browser, "f-list", "topics")
    assert browser.find_element("id", "count").text == "2 topics match"
    assert console_errors(browser) == []


def test_json_notes_read_as_key_value_lines(browser, tmp_path):
    """An automated reviewer's notes are a JSON object: shown as "key: value" lines, not raw JSON;
    hostile text inside stays text."""
    import json

    study = build_records_study(tmp_path / "s")
    note = {
        "best_score": 0.3333,
        "cited": {"id": "demo-51a", "database": "Demonstration corpus"},
        "queries": ["spin glass memory", "</script><script>window.__pwned=1</script>"],
    }
    with Study.open(study) as s, s.transaction() as conn:
        item = conn.execute(
            "SELECT item_id FROM reviews WHERE reviewer_id = 'bot' ORDER BY item_id"
        ).fetchone()[0]
        conn.execute(
            "UPDATE reviews SET notes = ?, prior_work = 'plain words {not json' "
            "WHERE reviewer_id = 'bot' AND item_id = ?",
            (json.dumps(note), item),
        )
    page = write_explorer(study, tmp_path / "page.html")
    open_page(browser, page)
    browser.execute_script("location.hash = arguments[0]", "item=" + item)
    detail = wait_for_text(browser, "detail", "best score: 0.3333")
    assert "cited: id: demo-51a, database: Demonstration corpus" in detail
    assert "queries: spin glass memory; </script><script>" in detail
    assert '"best_score"' not in detail and '{"' not in detail
    assert "plain words {not json" in detail  # text that is not JSON is shown as written
    assert browser.execute_script("return window.__pwned") is None
    assert console_errors(browser) == []
