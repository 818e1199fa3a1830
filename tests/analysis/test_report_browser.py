"""report.html in a real browser: headless Chromium opens the report of an analysed study and
finds the verdict's figure on the first screen beside the verdict at 1,400 and 1,024 px, directly
below it at 390 px, no text of the figure outside its box, and no page wider than the window."""

from __future__ import annotations

import json
from importlib.util import find_spec

import pytest

from harness.analysis.report.results import fmt
from harness.analysis.run import analyze
from tests.analysis.test_adjudication import _truthful_study
from tests.explore.browser import browser_paths, chromium, console_errors

pytestmark = pytest.mark.skipif(
    browser_paths() is None or find_spec("selenium") is None,
    reason="no headless browser: install the Debian packages chromium and chromium-driver "
    "(.ci/run does) and the dev extras (selenium) to run the report's browser test",
)

#: Boxes (left, top, right, bottom; page pixels) of the lead's parts, every text of the
#: figure (SVG text and HTML text blocks, with their scroll widths), and the page's widths.
MEASURE = """
const box = e => { const r = e.getBoundingClientRect();
  return [r.left, r.top + scrollY, r.right, r.bottom + scrollY]; };
const fig = document.getElementById('verdict-figure');
const words = document.querySelector('.lead-text p');
const texts = [...fig.querySelectorAll('text, .lf-label, .lf-note, .lf-title, figcaption')];
return {
  figure: box(fig),
  verdict: box(words),
  texts: texts.map(t => ({text: t.textContent, box: box(t),
    overflow: t instanceof HTMLElement ? t.scrollWidth - t.clientWidth : 0})),
  page: document.documentElement.scrollWidth,
  client: document.documentElement.clientWidth,
  window: innerWidth,
};
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """report.html and report.json of an analysed study whose verdict rests on the adjudicated
    scale under the joint rule (the true difference, Fieller's interval, J and its bound)."""
    study, _ = _truthful_study(tmp_path_factory.mktemp("report"), effect=0.0)
    analyze(study)
    folder = study / "report"
    return folder / "report.html", json.loads((folder / "report.json").read_text())


@pytest.fixture(scope="module")
def browser():
    with chromium() as driver:
        yield driver


def _open(driver, page, width: int) -> dict:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
    )
    driver.get(page.resolve().as_uri())
    measured: dict = driver.execute_script(MEASURE)
    return measured


def _inside(inner, outer, slack: float = 0.5) -> bool:
    return (
        inner[0] >= outer[0] - slack
        and inner[1] >= outer[1] - slack
        and inner[2] <= outer[2] + slack
        and inner[3] <= outer[3] + slack
    )


def _texts_fit(m: dict) -> None:
    assert len(m["texts"]) > 10  # tick labels, row labels, notes, the caption
    for t in m["texts"]:
        assert _inside(t["box"], m["figure"]), t
        assert t["overflow"] <= 0, t
        assert "..." not in t["text"], t  # wrapped, never cut


@pytest.mark.parametrize("width", [1400, 1024])
def test_the_verdicts_figure_is_on_the_first_screen_beside_the_verdict(browser, report, width):
    page, data = report
    m = _open(browser, page, width)
    figure, verdict = m["figure"], m["verdict"]
    assert figure[1] < 900, figure  # within the first screen
    assert figure[0] >= verdict[2] and figure[1] < verdict[3]  # beside the verdict's words
    _texts_fit(m)
    assert m["page"] <= m["client"] and m["window"] == width
    a = data["adjudication"]
    shown = " ".join(t["text"] for t in m["texts"])
    low, high = fmt(a["corrected_low"], signed=True), fmt(a["corrected_high"], signed=True)
    assert f"95% Fieller interval (J's uncertainty included) [{low}, {high}]" in shown
    assert "margin +/-0.1 (the SESOI on the true scale)" in shown
    assert f"lower bound {fmt(a['youden_bound'])}" in shown
    assert console_errors(browser) == []


def test_at_390_px_the_figure_is_directly_below_the_verdict_and_nothing_is_wider(browser, report):
    page, _ = report
    m = _open(browser, page, 390)
    figure, verdict = m["figure"], m["verdict"]
    assert m["window"] == 390
    assert m["page"] <= m["client"]  # no horizontal scroll, the tables and the plan included
    assert verdict[3] <= figure[1] < verdict[3] + 60  # the next thing below the verdict
    assert figure[2] <= 390
    _texts_fit(m)
