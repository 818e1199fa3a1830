"""One primary figure: where the verdict rests on the adjudicated estimate, the terminal summary,
the report's first lines and the estimates figure lead with it, and the primary reviewers' test
is labelled a check on their own scale."""

from __future__ import annotations

from harness.analysis.report import figures
from harness.analysis.report.results import fmt
from harness.analysis.run import analyze
from tests.analysis.helpers import CONDITIONS, TWO_HUMANS, build_study
from tests.analysis.test_adjudication import _truthful_study


def _forest_rows(result, monkeypatch) -> dict[str, list]:
    """The rows the estimates figure draws, per scale, top first."""
    drawn: dict[str, list] = {}

    def capture(ax, rows, scale, sesoi) -> None:
        drawn[scale] = rows[::-1]  # drawn bottom-up

    monkeypatch.setattr(figures, "_forest", capture)
    assert figures.estimates(result, 30).startswith(b"\x89PNG")
    return drawn


def test_the_adjudicated_estimate_leads_where_the_verdict_rests_on_it(
    tmp_path, fast_plan, monkeypatch
):
    study, _ = _truthful_study(tmp_path, effect=0.3)
    result = analyze(study, fast_plan)
    a, p = result.adjudication, result.primary
    assert a is not None and result.verdict.basis == "adjudicated"
    estimate = fmt(a.estimate, signed=True)

    lines = result.summary().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("-" * 10)) + 1
    assert lines[first].startswith(
        f"Verdict's:    adjudicated difference (PPI++) {estimate} 95% CI"
    )
    assert lines[first + 1] == f"Check:        {p.description}, on the primary reviewers' scale"
    assert not any(line.startswith("Primary:") for line in lines)
    rests = [line for line in lines if line.startswith("  Rests on ")]
    assert len(rests) == 1 and "is a check on their own scale" in rests[0]

    md = (study / "report" / "report.md").read_text()
    verdict = md.split("## Verdict\n", 1)[1].split("\n## ", 1)[0]
    paragraphs = [x.strip() for x in verdict.split("\n\n") if x.strip()]
    assert paragraphs[0].startswith("**SUPPORTED**")
    # the estimate a `supported` reads (their scale, one-sided) first, then the true difference
    assert paragraphs[1].startswith(
        "**The verdict's estimate**: adjudicated difference (PPI++, the adjudicators' scale) "
        f"{estimate}, 95% interval [{fmt(a.ci_low, signed=True)}, {fmt(a.ci_high, signed=True)}]"
        f" (90%: [{fmt(a.tost_low, signed=True)}, {fmt(a.tost_high, signed=True)}])"
    )
    assert (
        f"true difference (adjudicated / J) {fmt(a.corrected_estimate, signed=True)}"
        in (paragraphs[1])
    )
    rests = next(x for x in paragraphs if x.startswith("The verdict rests on"))
    assert rests.startswith(
        f"The verdict rests on the adjudicated difference (PPI++, human adjudicators) {estimate}"
    )
    assert f"the primary reviewers' {p.description}" in rests
    assert "## Primary reviewers' scale (a check of the adjudicated estimate)" in md
    assert "## Primary analysis\n" not in md

    rows = _forest_rows(result, monkeypatch)["difference"]
    assert rows[0].role == "verdict" and rows[0].label.endswith("(the verdict's)")
    assert (rows[0].estimate, rows[0].ci_low, rows[0].ci_high) == (a.estimate, a.ci_low, a.ci_high)
    assert "primary" not in {r.role for r in rows}
    check = next(r for r in rows if r.name == "primary")
    assert check.role == "check" and check.label.endswith("(check: primary reviewers' scale)")
    assert check.estimate == p.estimate


def test_without_a_sample_the_primary_test_leads_as_before(tmp_path, fast_plan, monkeypatch):
    rows = [
        (f"t{t:03d}", c, 0, r, "not_published" if (t + len(c) + len(r)) % 3 else "published")
        for t in range(60)
        for c in CONDITIONS
        for r in TWO_HUMANS
    ]
    study = build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS)
    result = analyze(study, fast_plan, write_report=False)
    lines = result.summary().splitlines()
    assert any(line.startswith("Primary:") for line in lines)
    assert not any(line.startswith(("Verdict's:", "  Rests on ")) for line in lines)
    drawn = _forest_rows(result, monkeypatch)["difference"]
    assert drawn[0].role == "primary" and "verdict" not in {r.role for r in drawn}
