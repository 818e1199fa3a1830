"""`harness run` end to end on a tiny pilot with the real embedded model, then resumed."""

from __future__ import annotations

import pytest

from harness.run import run_study
from harness.study import Study


@pytest.mark.slow
def test_run_pilot_end_to_end_and_resume(tmp_path):
    folder = tmp_path / "pilot"
    lines: list[str] = []
    result = run_study(folder, pilot=True, limit=3, max_tokens=12, normalise=False,
                       echo=lines.append)
    assert result.report_html.exists()
    assert "NO VERDICT" in result.headline.upper() and "pilot" in result.headline
    with Study.open(folder) as s:
        assert s.meta("demo") == "1" and s.pilot
        assert s.count("outputs", "status = 'ok'") == 9
        assert s.count("reviews") == 2 * s.count("items") > 0
        assert s.rows("SELECT COUNT(DISTINCT prompt_id) FROM geometry")[0][0] == 9
        outputs = s.rows("SELECT output_id, text FROM outputs ORDER BY output_id")
    assert [line for line in lines if line.startswith("== ")] == [
        "== generate", "== collect", "== judge --blind", "== prereg", "== judge --auto",
        "== geometry probe", "== analyze"]

    again = run_study(folder, pilot=True, limit=3, max_tokens=12, normalise=False,
                      echo=lambda _: None)
    assert again.verdict == result.verdict
    with Study.open(folder) as s:  # resumed: nothing collected or reviewed twice
        assert s.rows("SELECT output_id, text FROM outputs ORDER BY output_id") == outputs
        assert s.count("reviews") == 2 * s.count("items")


def test_generate_stage_reports_how_the_topics_were_chosen(tmp_path):
    from harness.generate import generate
    from harness.run import _chosen

    generate(tmp_path / "s", subset=7, subset_seed=2, pilot=True)
    assert _chosen(tmp_path / "s").startswith(" (subset of ")
    assert "6 domain pairs" in _chosen(tmp_path / "s")
    generate(tmp_path / "l", limit=5, pilot=True)
    assert _chosen(tmp_path / "l").startswith(" (the first 5 of ")
