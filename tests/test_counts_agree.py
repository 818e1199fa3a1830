"""One count of each thing, through the real entry point in child processes: a study of bank
topics whose model (a loopback server) states the planted pairs, blinded with the bank's
controls, primary reviewers of both kinds and adjudicators, reviewed and analysed. Every count
that `judge --blind`, `status`, `judge --status`, `prereg`, `analyze` and the report print of
the same thing (items, real and control; assignments; controls routed, held out and scored;
reviews) is the same number under the same name.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import run_subprocess
from tests.judge.controls_study import small_plan
from tests.literature.conftest import CORPUS, write_jsonl
from tests.servers.openai_server import OpenAIServer

MODEL = "openai-compatible/m"
N_TOPICS = 10
ROSTER = """reviewers:
  - {id: rev-a, kind: human, expertise: [Computer Science], capacity: 20}
  - {id: rev-b, kind: human, expertise: [Medicine], capacity: 20}
  - {id: rev-c, kind: human, expertise: [], capacity: 20}
  - {id: auto-bm25, kind: automated, method: retrieval, capacity: 200}
""" + "".join(
    f"  - {{id: adj-{n}, kind: human, role: adjudicator, capacity: 8}}\n" for n in range(1, 7)
)
# controls of the other answer than the bank's before-the-cut-off links, with their own texts
CONTROLS = "controls:\n" + "".join(
    f'  - {{statement: "Combines method {n} with material {n} in a new design.", '
    f"expected: not_published, kind: cross, "
    f'text: "Material {n} could be shaped by method {n}. A trial would compare it."}}\n'
    for n in range(6)
)
STATUS_COLUMNS = ("reviewer", "kind", "role", "assigned", "returned", "missing", "searches")
BLIND_COLUMNS = ("reviewer", "kind", "capacity", "real items", "cross", "single_a", "single_b")
BLIND_COLUMNS += ("expertise_match", "max_per_topic", "controls", "assigned")


def restate(body: dict[str, Any]) -> str:
    """The model under test: its idea restates the request in one sentence, so a control text
    states the planted pair and is kept."""
    content = [m for m in body["messages"] if m.get("role") == "user"][-1]["content"]
    text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
    return text.replace(". ", "; ").replace("\n", " ").rstrip(".") + "."


def harness(*args: object) -> str:
    done = run_subprocess(*(str(a) for a in args))
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def table(out: str, columns: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """A printed frame (`DataFrame.to_string`, right-aligned) by its first column: each cell
    ends where its column's name ends in the header line."""
    lines = out.splitlines()
    at = next(n for n, line in enumerate(lines) if line.split()[:2] == list(columns[0:2]))
    header, ends, start = lines[at], [], 0
    for name in columns:
        found = re.search(rf"(?<!\S){re.escape(name)}(?!\S)", header[start:])
        assert found is not None, (name, header)
        start += found.end()
        ends.append(start)
    rows = {}
    for line in lines[at + 1 :]:
        first = line[: ends[0]].strip()
        if not first or " " in first or line[ends[0] : ends[0] + 1] not in ("", " "):
            break  # the line after the table
        cells = [line[a:b].strip() for a, b in zip([0, *ends], ends, strict=False)]
        rows[cells[0]] = dict(zip(columns, cells, strict=True))
    return rows


def one(pattern: str, text: str) -> re.Match[str]:
    found = re.search(pattern, text, re.MULTILINE)
    assert found is not None, (pattern, text)
    return found


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("counts")
    folder = root / "study"
    (root / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    (root / "controls.yaml").write_text(CONTROLS, encoding="utf-8")
    plan = small_plan(root, adjudicated=2, minimum=2)
    corpus = write_jsonl(root / "works.jsonl", [dict(r) for r in CORPUS])
    seen: dict[str, Any] = {"folder": folder}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-counts")
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("COLUMNS", "250")
        patch.setenv("HARNESS_LITERATURE_CACHE", str(root / "literature-cache"))
        patch.delenv("OPENAI_BASE_URL", raising=False)
        harness("generate", "--study", folder, "--limit", N_TOPICS, "--pilot")
        with OpenAIServer(reply_text=restate) as server:
            harness("collect", "--study", folder, "--model", MODEL, "--base-url", server.base_url)
            seen["blind"] = harness(
                "judge", "--blind", "--study", folder, "--reviewers", root / "roster.yaml",
                "--no-extract", "--no-normalise", "--cutoff", "2015", "--plan", plan,
                "--same-topic", "--controls", root / "controls.yaml",
            )  # fmt: skip
        harness("prereg", "--study", folder, "--plan", plan)
        seen["prereg"] = (folder / "prereg.md").read_text(encoding="utf-8")
        seen["status before"] = harness("status", "--study", folder)
        seen["judge status before"] = harness("judge", "--status", "--study", folder)
        review_by_hand(folder)
        harness("judge", "--auto", "--study", folder, "--source", f"local:{corpus}")
        seen["analyze"] = harness("analyze", "--study", folder, "--allow-deviation")
        seen["status"] = harness("status", "--study", folder)
        seen["judge status"] = harness("judge", "--status", "--study", folder)
    seen["report"] = (folder / "report" / "report.md").read_text(encoding="utf-8")
    seen["html"] = (folder / "report" / "report.html").read_text(encoding="utf-8")
    seen["json"] = json.loads((folder / "report" / "report.json").read_text(encoding="utf-8"))
    return seen


def review_by_hand(folder: Path) -> None:
    """Every human assignment answered, as an import stores it: controls mostly right, real
    items at random (the accuracy is not what is tested)."""
    rng = random.Random(7)
    with sqlite3.connect(folder / "study.sqlite") as conn:
        rows = conn.execute(
            "SELECT a.item_id, a.reviewer_id, c.expected FROM assignments a "
            "JOIN reviewers r USING (reviewer_id) JOIN items i USING (item_id) "
            "LEFT JOIN controls c USING (control_id) WHERE r.kind = 'human'"
        ).fetchall()
        for item, reviewer, expected in rows:
            wrong = {"published": "not_published", "not_published": "published"}
            verdict = (
                (expected if rng.random() < 0.8 else wrong[expected])
                if expected
                else rng.choice(["published", "not_published"])
            )
            conn.execute(
                "INSERT INTO reviews (item_id, reviewer_id, verdict, source, created_at) "
                "VALUES (?, ?, ?, 'xlsx', '2026-01-01T00:00:00Z')",
                (item, reviewer, verdict),
            )


def test_items_are_counted_alike_real_and_control(study: dict[str, Any]) -> None:
    blind = study["blind"]
    real = int(one(r"^Real items: (\d+) new", blind)[1])
    controls = int(one(r"^Controls: (\d+) items", blind)[1])
    assert controls > 0 and real == 3 * N_TOPICS
    both = real + controls
    assert one(r"Routing: (\d+) real items x k=2", blind)[1] == str(real)
    assert one(r"plus \d+ assignments of (\d+) control items", blind)[1] == str(controls)
    assert one(r"Blinding commitment \(.*, (\d+) items, made", blind)[1] == str(both)
    for status in (study["status before"], study["status"]):
        assert f"{both} items ({real} real, {controls} control)" in status
    assert f"- Items (real and control): {both};" in study["prereg"]
    assert one(r"^Design: .*; \d+ of (\d+) real items analysed;", study["analyze"])[1] == str(real)
    made = one(
        r"^\| Real items: made / reviewed / analysed \| (\d+) / (\d+) / (\d+) \|", study["report"]
    )
    assert made[1] == made[2] == str(real)
    assert one(r"(\d+) of \d+ real items analysed", study["analyze"])[1] == made[3]


def test_assignments_per_reviewer_are_the_same_in_blind_and_status(study: dict[str, Any]) -> None:
    routed = table(study["blind"], BLIND_COLUMNS)
    for out in (study["judge status before"], study["judge status"]):
        shown = table(out, STATUS_COLUMNS)
        assert set(shown) == set(routed)
        for reviewer, row in routed.items():
            assert int(row["assigned"]) == int(row["real items"]) + int(row["controls"])
            assert shown[reviewer]["assigned"] == row["assigned"], reviewer
    total = sum(int(r["assigned"]) for r in routed.values())
    assert one(r"= (\d+) assignments \(seed", study["blind"])[1] == str(total)
    assert f"{total} assignments" in study["status"]
    assert f"{total} of {total} assigned reviews returned" in study["judge status"]
    adjudicators = one(r"plus (\d+) adjudicator assignments", study["blind"])[1]
    controls = sum(int(r["controls"]) for r in routed.values() if r["reviewer"].startswith("adj"))
    line = one(r"^Adjudication: .*$", study["judge status"])[0]
    assert line.endswith(
        f"adjudicator reviews returned ({adjudicators} assignments of sample items, "
        f"{controls} of control items)"
    ), line


def test_controls_routed_held_out_and_scored_agree(study: dict[str, Any]) -> None:
    blind, after = study["blind"], study["judge status"]
    routed = table(blind, BLIND_COLUMNS)
    line = one(r"^Controls: .*$", blind)[0]
    columns = (*STATUS_COLUMNS, "last_import", "controls routed", "controls scored")
    shown = table(after, columns)
    report = {
        r["label"]: r["published"] + r["unpublished"]
        for r in study["json"]["controls"]["accuracy"]
        if r["scope"] == "reviewer"
    }
    assert "controls routed" not in study["judge status before"]  # sealed before unblinding
    for reviewer, row in routed.items():
        n = row["controls"]
        assert shown[reviewer]["controls routed"] == n, reviewer
        if reviewer == "auto-bm25":  # scored on its held-out controls only
            split = one(rf"auto-bm25 {n} \((\d+) held out, (\d+) calibration\)", line)
            held, calibrating = int(split[1]), int(split[2])
            assert held + calibrating == int(n) and calibrating > 0
            assert shown[reviewer]["controls scored"] == str(held)
        elif n == "0":  # fewer than planned (the note says so): not listed
            assert not re.search(rf"(?<![\w-]){reviewer} \d", line), reviewer
            assert shown[reviewer]["controls scored"] == n, reviewer
        else:
            assert re.search(rf"(?<![\w-]){reviewer} {n}(?![\d(])", line), reviewer
            assert not re.search(rf"{reviewer} {n} \(\d+ held out", line), reviewer
            assert shown[reviewer]["controls scored"] == n, reviewer  # no unsure verdicts
        if reviewer in report:  # primary reviewers: the report's accuracy table
            assert int(shown[reviewer]["controls scored"]) == report[reviewer], reviewer
    assert "routed per reviewer: " in line and "held-out controls only" in line


def test_reviews_add_up_under_one_name(study: dict[str, Any]) -> None:
    design = one(r"^Design: .*$", study["analyze"])[0]
    counted = one(
        r"(\d+) primary and (\d+) adjudicator reviews of real items by \d+ reviewers; "
        r"(\d+) reviews of control items$",
        design,
    )
    primary, adjudicator, controls = (int(counted[n]) for n in (1, 2, 3))
    assert " of control items" not in design.replace("reviews of control items", "")
    stored = int(one(r"│ reviews +│ (\d+) reviews", study["status"])[1])
    assert primary + adjudicator + controls == stored
    report = study["report"]
    assert (
        f"| Reviews of real items: primary / adjudicators | {primary} / {adjudicator} |" in report
    )
    assert f"| Reviews of control items | {controls} |" in report


def test_the_accuracy_rows_for_all_reviewers_are_named_apart(study: dict[str, Any]) -> None:
    for text in (study["report"], study["html"]):
        assert "all reviewers, pooled" in text
        assert "all reviewers, weighted by share of real judgments" in text
        assert "all adjudicators, weighted by share of adjudicated judgments" in text
    labels = [r["label"] for r in study["json"]["controls"]["accuracy"]]
    assert "all reviewers" not in labels and "all reviewers, pooled" in labels
    rows = re.findall(r"^\| \*\*(all [^*]+)\*\* \|", study["report"], re.MULTILINE)
    assert "all reviewers" not in rows
    # the weighted rows' effective counts are rounded, never printed to sixteen places
    weighted = re.findall(r"^\| \*\*all [^*]+, weighted [^*]+\*\* \|.*$", study["report"], re.M)
    assert len(weighted) == 2 and not any(
        re.search(r"\d\.\d\d+ \(|\(\d+\.\d\d+\)", row) for row in weighted
    )
