"""`harness topics check`: passes on good banks, and each rule fails on a bank made to break it."""

from __future__ import annotations

import copy
import json

import pytest

from harness.cli import main
from harness.curation.check import check_bank
from harness.curation.rules import Rules
from tests.curation.conftest import write_bank


def failed(report) -> dict[str, list[str]]:
    return {s.name: [str(f) for f in s.findings] for s in report.sections if not s.ok}


def test_bundled_bank_passes_through_the_cli(capsys, tmp_path):
    main(
        [
            "topics",
            "check",
            "--cutoff",
            "2015",
            "--cutoff",
            "2020-06-30",
            "--cutoff",
            "2024",
            "--json",
            str(tmp_path / "r.json"),
        ]
    )
    out = capsys.readouterr().out
    assert out.strip().endswith("bank check: passed")
    for needed in (
        "distinct field pairs",
        "6 of 6 domain pairs",
        "most used field",
        "cut-off 2015:",
        "cut-off 2020:",
        "cut-off 2024:",
        "threshold cosine >= 0.8",
    ):
        assert needed in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["ok"] and report["rules"]["cutoffs"] == [2015, 2020, 2024]


def test_small_good_bank_passes(tmp_path, topics, tokenizer):
    report = check_bank(write_bank(tmp_path / "b.yaml", topics), tokenizer=tokenizer)
    assert report.ok, report.to_text()


def test_all_schema_errors_are_reported_with_their_lines(tmp_path, topics, tokenizer):
    bad = copy.deepcopy(topics)
    bad[1]["field_b"] = "Alchemy"
    bad[3]["concepts_a"] = ["one concept only"]
    bad.append(dict(bad[0]))  # duplicate id
    path = write_bank(tmp_path / "b.yaml", bad)
    lines = path.read_text().splitlines()
    starts = [i + 1 for i, line in enumerate(lines) if line.startswith("- id:")]
    errors = failed(check_bank(path, tokenizer=tokenizer))["schema"]
    assert len(errors) == 3
    assert errors[0].startswith(f"{path}:{starts[1]}: field_b: ") and "Alchemy" in errors[0]
    assert errors[1].startswith(f"{path}:{starts[3]}: concepts_a: ")
    assert errors[2].startswith(f"{path}:{starts[6]}: ") and "duplicate topic id" in errors[2]


def test_near_duplicate_topics_and_concepts(tmp_path, topics, tokenizer):
    twin = copy.deepcopy(topics[0])
    twin["id"] = "twin-01"
    twin["concepts_a"] = [c + "s" for c in twin["concepts_a"]]  # plural: same idea
    twin["concepts_b"] = [c.upper() for c in twin["concepts_b"]]
    report = check_bank(write_bank(tmp_path / "b.yaml", [*topics, twin]), tokenizer=tokenizer)
    problems = failed(report)
    assert f"near duplicate of topic {topics[0]['id']}" in problems["near-duplicate topics"][0]
    assert len(problems["near-duplicate concepts"]) == 4
    assert all("twin-01" in p for p in problems["near-duplicate concepts"])


def test_concept_length_rule(tmp_path, topics, tokenizer):
    topics[2]["concepts_b"][1] = "a concept of five words"
    topics[4]["concepts_a"][1] = "apoptosis"
    problems = failed(check_bank(write_bank(tmp_path / "b.yaml", topics), tokenizer=tokenizer))
    assert list(problems) == ["concept lengths"]
    assert "'a concept of five words' has 5 word(s) (rule: 2-4)" in problems["concept lengths"][0]
    assert "'apoptosis' has 1 word(s)" in problems["concept lengths"][1]


def test_token_balance_rule(tmp_path, topics, tokenizer):
    topics[0]["concepts_a"][1] = "electroencephalographically photoautotrophically"
    path = write_bank(tmp_path / "b.yaml", topics)
    report = check_bank(
        path, rules=Rules(max_token_range=5, max_mean_token_diff=99), tokenizer=tokenizer
    )
    problems = failed(report)
    assert list(problems) == ["token balance"]
    assert f"topic {topics[0]['id']}: prompts differ by" in problems["token balance"][0]
    mean_rule = Rules(max_mean_token_diff=0.1)
    problems = failed(check_bank(path, rules=mean_rule, tokenizer=tokenizer))
    assert any("on average" in p for p in problems["token balance"])


def test_spread_rules(tmp_path, topics, tokenizer):
    path = write_bank(tmp_path / "b.yaml", topics[:5])
    problems = failed(check_bank(path, tokenizer=tokenizer))
    assert list(problems) == ["field and domain spread"]
    assert problems["field and domain spread"][0].startswith("no topic pairs the domains")
    path = write_bank(tmp_path / "c.yaml", topics)
    tight = Rules(max_field_share=0.1, field_cap_floor=0, field_pairs_per_topic=2.0)
    messages = failed(check_bank(path, rules=tight, tokenizer=tokenizer))
    messages = messages["field and domain spread"]
    used = {f for t in topics for f in (t["field_a"], t["field_b"])}
    assert sum("(rule: at most 0 = max of 10% of 6 topics and 0)" in m for m in messages) == len(
        used
    )
    assert messages[-1] == "6 distinct field pairs (rule: at least 12 for 6 topics)"


def test_link_rules_and_control_counts(tmp_path, topics, tokenizer):
    for t in topics:
        t["known_links"] = []
    link = {"title": "A work", "year": 2018, "summary": "What it combined."}
    topics[0]["known_links"] = [link, {**link, "title": "Older work", "year": 2010}]
    topics[1]["known_within_a"] = [{**link, "year": 2021}]
    path = write_bank(tmp_path / "b.yaml", topics)
    report = check_bank(path, rules=Rules(cutoffs=(2015, 2020)), tokenizer=tokenizer)
    assert report.ok
    links = report.sections[-1].stats
    assert links["controls"]["2015"] == {
        "cross_published": 1,
        "cross_unpublished": 1,
        "single_published": 0,
        "single_unpublished": 1,
        "topics_with_published": 1,
    }
    assert links["controls"]["2020"]["cross_published"] == 2
    topics[1]["known_within_a"].append({**link, "title": "Future work", "year": 2099})
    topics[2]["known_links"] = [link, {**link, "title": "a  WORK"}]
    problems = failed(check_bank(write_bank(path, topics), tokenizer=tokenizer))["known links"]
    assert len(problems) == 2
    assert "'Future work' has year 2099" in problems[0] and "title listed twice" in problems[1]


def test_failing_bank_exits_1_and_bad_cutoff_exits_2(tmp_path, topics, capsys):
    path = write_bank(tmp_path / "b.yaml", topics[:5])
    with pytest.raises(SystemExit) as done:
        main(["topics", "check", str(path)])
    assert done.value.code == 1
    assert "bank check: FAILED (field and domain spread)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        main(["topics", "check", str(path), "--cutoff", "20x4"])
    assert done.value.code == 2
    assert "--cutoff: cut-off '20x4' is not YYYY or YYYY-MM-DD" in capsys.readouterr().err


def test_subset_section_shows_what_the_seeded_subset_covers(tmp_path, topics, tokenizer):
    path = write_bank(tmp_path / "b.yaml", topics + topics_renamed(topics))
    report = check_bank(path, tokenizer=tokenizer, subset=(6, 3))
    section = next(s for s in report.sections if s.name.startswith("subset"))
    assert section.ok and section.stats["domain_pairs"] == 6 and section.stats["topics"] == 6
    assert "6 of 12 topics" in section.summary[0]
    small = check_bank(path, tokenizer=tokenizer, subset=(4, 3))
    section = next(s for s in small.sections if s.name.startswith("subset"))
    assert len(section.warnings) == 2 and section.ok  # 4 topics cannot cover 6 domain pairs
    large = check_bank(path, tokenizer=tokenizer, subset=(50, 3))
    assert (
        "fewer than 50" in next(s for s in large.sections if s.name.startswith("subset")).summary[0]
    )


def topics_renamed(topics):
    return [{**t, "id": t["id"] + "-b"} for t in topics]
