"""A pilot study through every stage, as a researcher runs it from the command line, with human
reviewers: generate, prereg, collect (loopback OpenAI-compatible server), judge --blind, packets
filled in a spreadsheet and imported, analyze, verify, status.
"""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from harness.cli import main
from tests.judge.fakes import fill_workbook
from tests.plans import primary_only_plan
from tests.servers.openai_server import OpenAIServer

KEY = "sk-test-pipeline-Hm4rQ9wLx2"
MODEL = "gpt-4o-mini"
CONDITIONS = ("single_a", "single_b", "cross")
# Three people whose expertise covers the fields of the first four topics of the bundled bank.
ROSTER = """reviewers:
  - {id: rev-ada, kind: human, expertise: [Computer Science, Mathematics], capacity: 20}
  - {id: rev-bo, kind: human, expertise: [Neuroscience], capacity: 20}
  - {id: rev-cy, kind: human, expertise: [Physics and Astronomy, Engineering], capacity: 20}
"""
# Verdict of reviewer r on the item of topic t and condition c: PATTERN[c][(t + r) % 4]
# (N not_published, P published, U unsure): more "novel" after cross prompts, reviewers disagree.
PATTERN = {"cross": "NNUP", "single_a": "PNPU", "single_b": "PPNP"}
CODES = {"N": "not_published", "P": "published", "U": "unsure"}


def harness(*args: str) -> None:
    main([str(a) for a in args])


def blinding_key(study: Path) -> dict[str, tuple[str, str]]:
    """item_id -> (topic_id, condition), read straight from the store (the test's oracle)."""
    with sqlite3.connect(study / "study.sqlite") as conn:
        rows = conn.execute(
            "SELECT i.item_id, p.topic_id, p.condition FROM items i JOIN outputs o "
            "USING (output_id) JOIN prompts p USING (prompt_id)"
        ).fetchall()
    return {item: (topic, condition) for item, topic, condition in rows}


def identifying_strings(study: Path) -> set[str]:
    """What must never reach a reviewer: ids of topics, prompts, outputs; model names."""
    with sqlite3.connect(study / "study.sqlite") as conn:
        found = set()
        for sql in (
            "SELECT topic_id FROM topics",
            "SELECT prompt_id FROM prompts",
            "SELECT output_id FROM outputs",
            "SELECT model FROM outputs",
            "SELECT model_reported FROM outputs",
            "SELECT system_fingerprint FROM outputs",
        ):
            found |= {row[0] for row in conn.execute(sql) if row[0]}
    return found | {MODEL, "openai"}


def packet_texts(packets: Path) -> dict[str, str]:
    """Every file reviewers receive, as text; an xlsx is read part by part (sheets, properties)."""
    texts = {}
    for path in sorted(p for p in packets.rglob("*") if p.is_file()):
        if path.suffix == ".xlsx":
            with zipfile.ZipFile(path) as archive:
                for name in archive.namelist():
                    texts[f"{path.name}:{name}"] = archive.read(name).decode("utf-8")
        else:
            texts[path.name] = path.read_text(encoding="utf-8")
    return texts


def expected_analysis(
    key: dict[str, tuple[str, str]], verdicts: dict[tuple[str, str], str]
) -> dict:
    """The primary analysis by hand: item score = share of its reviewers saying not_published
    (unsure counts as not novel), topic x condition proportion = mean item score, d_t = p_cross -
    (p_single_a + p_single_b) / 2, and the exact mid-p over all 3^n relabellings of the three
    conditions within each topic."""
    scores: dict[str, list[int]] = {}
    for (item, _), verdict in verdicts.items():
        scores.setdefault(item, []).append(verdict == "not_published")
    cells: dict[tuple[str, str], list[float]] = {}
    for item, votes in scores.items():
        cells.setdefault(key[item], []).append(sum(votes) / len(votes))
    topics = sorted({topic for topic, _ in key.values()})
    p = {(t, c): sum(cells[t, c]) / len(cells[t, c]) for t in topics for c in CONDITIONS}
    d = {t: p[t, "cross"] - (p[t, "single_a"] + p[t, "single_b"]) / 2 for t in topics}
    observed = sum(d.values()) / len(d)

    def d_if_cross(t: str, label: str) -> float:  # d_t when `label` is the cross condition
        others = [c for c in CONDITIONS if c != label]
        return p[t, label] - (p[t, others[0]] + p[t, others[1]]) / 2

    flips = [
        sum(d_if_cross(t, c) for t, c in zip(topics, labels, strict=True)) / len(d)
        for labels in itertools.product(CONDITIONS, repeat=len(topics))
    ]
    above = sum(f > observed + 1e-12 for f in flips)
    ties = sum(abs(f - observed) <= 1e-12 for f in flips)
    return {
        "p": p,
        "d": d,
        "mean_d": observed,
        "p_mid": (above + ties / 2) / len(flips),
        "mean_cross": sum(p[t, "cross"] for t in topics) / len(topics),
    }


def test_a_pilot_study_with_human_reviewers_from_generate_to_status(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("COLUMNS", "200")  # rich tables unwrapped
    study = tmp_path / "study"

    # 1-3. Prompts, preregistration, outputs from an OpenAI-compatible server.
    harness("generate", "--study", study, "--limit", "4", "--pilot")
    # the roster has primary reviewers only: a plan without an adjudicated sample
    harness("prereg", "--study", study, "--plan", primary_only_plan(tmp_path))
    with OpenAIServer(api_key=KEY) as server:
        harness(
            "collect",
            "--study",
            study,
            "--backend",
            "openai",
            "--base-url",
            server.base_url,
            "--model",
            MODEL,
        )
    out = capsys.readouterr().out
    assert "12 completed, 0 failed" in out and "12 ok, 0 failed, 0 pending of 12" in out

    # 4. Blind and route. Three people cannot take two of three items per topic while each sees
    # one item per topic: the first try says by how much, writes no packets; the researcher then
    # lets a reviewer see several items of a topic.
    roster = tmp_path / "roster.yaml"
    roster.write_text(ROSTER, encoding="utf-8")
    # Without control items: this test checks the real items' numbers end to end (controls are
    # tested in tests/judge/controls/test_control_sources.py), and no model runs in the blind stage.
    blind = [
        "judge",
        "--blind",
        "--study",
        study,
        "--no-extract",
        "--no-normalise",
        "--reviewers",
        roster,
        "--k",
        "2",
        "--no-bank-controls",
    ]
    with pytest.raises(SystemExit) as refused:
        harness(*blind)
    err = capsys.readouterr().err.strip()
    assert refused.value.code == 2 and "\n" not in err
    assert "need 24 assignments, the roster offers 12 (short by 12" in err
    assert "--same-topic lifts that rule" in err
    assert not (study / "packets").exists()
    harness(*blind, "--same-topic")
    out = capsys.readouterr().out
    assert "12 items x k=2 reviewers = 24 assignments" in out and "Packets: 12 files" in out
    key = blinding_key(study)
    assert sorted(c for _, c in key.values()) == sorted(CONDITIONS * 4)
    with sqlite3.connect(study / "study.sqlite") as conn:
        fields = {f for row in conn.execute("SELECT field_a, field_b FROM topics") for f in row}
    assert fields <= {
        f
        for line in ROSTER.splitlines()[1:]
        for f in re.search(r"\[(.*)\]", line).group(1).split(", ")
    }

    # Nothing a reviewer receives names a condition, a topic, a prompt, an output or the model.
    texts = packet_texts(study / "packets")
    assert {Path(name.split(":")[0]).suffix for name in texts} == {".xlsx", ".csv", ".md"}
    forbidden = identifying_strings(study)
    for name, text in texts.items():
        assert not re.search(r"\b(single_a|single_b|cross)\b", text, re.IGNORECASE), name
        assert not [s for s in forbidden if s.lower() in text.lower()], name

    # 5-6. Each reviewer fills the workbook in a spreadsheet; all come back and are imported.
    topics = sorted({t for t, _ in key.values()})
    reviewers = sorted(p.stem for p in (study / "packets").glob("*/*.xlsx"))
    assert reviewers == ["rev-ada", "rev-bo", "rev-cy"]
    returned, verdicts = tmp_path / "returned", {}
    returned.mkdir()
    for r, reviewer in enumerate(reviewers):

        def verdict(item: str, r: int = r, reviewer: str = reviewer) -> tuple[str, int, str]:
            topic, condition = key[item]
            code = CODES[PATTERN[condition][(topics.index(topic) + r) % 4]]
            verdicts[item, reviewer] = code
            prior = "https://doi.org/10.1234/prior" if code == "published" else ""
            return code, 2 + r, prior

        fill_workbook(
            study / "packets" / reviewer / f"{reviewer}.xlsx",
            returned / f"{reviewer}.xlsx",
            verdict,
        )
    assert len(verdicts) == 24 and set(verdicts.values()) == set(CODES.values())
    harness("judge", "--import", "--study", study, *sorted(returned.glob("*.xlsx")))
    assert capsys.readouterr().out.count(" imported ") == 3
    harness("judge", "--status", "--study", study)
    assert "24 of 24 assigned reviews returned, 0 missing, across 3 reviewers" in (
        capsys.readouterr().out
    )

    # Before the analysis, the judgments export holds blinded ids and verdicts only.
    harness("export", "judgments", "--study", study, "--format", "csv")
    capsys.readouterr()
    blinded = pd.read_csv(study / "exports" / "judgments.csv")
    assert len(blinded) == 24 and "condition" not in blinded and "topic_id" not in blinded

    # 7. The analysis agrees with the same analysis done by hand on the verdicts written above.
    harness("analyze", "--study", study)
    out = capsys.readouterr().out
    assert (study / "report" / "explorer.html").stat().st_size > 0
    harness("export", "judgments", "--study", study, "--format", "csv")
    capsys.readouterr()
    judgments = pd.read_csv(study / "exports" / "judgments.csv")
    assert {
        (r.item_id, r.reviewer_id): (r.topic_id, r.condition) for r in judgments.itertuples()
    } == {k: key[k[0]] for k in verdicts}
    assert "VERDICT: NO VERDICT" in out and "Blinding key: verified" in out
    report = study / "report"
    for name in ("report.md", "report.html", "report.json"):
        assert (report / name).stat().st_size > 0, name
    result = json.loads((report / "report.json").read_text(encoding="utf-8"))
    want = expected_analysis(key, verdicts)
    assert result["verdict"]["label"] == "no verdict"
    assert "pilot" in result["verdict"]["reason"]
    assert result["design"]["pilot"] is True
    assert result["verification"]["blinding_status"] == "verified"
    assert (
        result["verification"]["blinding_recorded"] == result["verification"]["blinding_computed"]
    )
    assert result["design"]["reviewers"] == {"human": 3}
    assert result["design"]["reviews"] == 24 and result["design"]["items_eligible"] == 12
    assert {r["reviewer_id"]: r["kind"] for r in result["per_reviewer"]} == dict.fromkeys(
        reviewers, "human"
    )
    rows = {row["topic_id"]: row for row in result["topics"]}
    assert sorted(rows) == topics
    for topic in topics:
        for condition in CONDITIONS:
            assert rows[topic][f"p_{condition}"] == pytest.approx(want["p"][topic, condition])
        assert rows[topic]["d"] == pytest.approx(want["d"][topic])
    assert len(set(want["d"].values())) > 1  # the topics differ: there is something to test
    primary = result["primary"]
    assert primary["n_topics"] == 4 and primary["test"] == "permutation"
    assert primary["estimate"] == pytest.approx(want["mean_d"])
    assert primary["mean_cross"] == pytest.approx(want["mean_cross"])
    assert primary["p_value"] == pytest.approx(want["p_mid"])
    cross_votes = [v for (item, _), v in verdicts.items() if key[item][1] == "cross"]
    assert result["literal_rule"]["n_cross"] == len(cross_votes) == 8
    assert result["literal_rule"]["novel_cross"] == cross_votes.count("not_published")
    for name in ("report.md", "report.html"):
        text = (report / name).read_text(encoding="utf-8")
        assert "verified" in text and re.search("no verdict", text, re.IGNORECASE), name

    # 8. Materials unchanged; every stage of the pipeline complete (the attention probe is a
    # separate experiment on the embedded model, not run here).
    harness("verify", "--study", study)
    assert "0 changed or missing" in capsys.readouterr().out
    harness("status", "--study", study)
    out = capsys.readouterr().out
    stages = {
        line.split("│")[1].strip(): line.split("│")[3].strip()
        for line in out.splitlines()
        if line.count("│") == 4
    }
    assert stages == {
        "generate": "done",
        "collect": "12/12 (100%)",
        "judge": "blinding key committed",
        "reviews": "24/24 (100%)",
        "prereg": "done",
        "analyze": "done",
        "geometry": "0/12 (0%)",
    }

    # The API key reached the server and nothing else.
    assert f"Bearer {KEY}" in server.log.auth_headers
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert KEY.encode() not in path.read_bytes(), path
