"""A third adjudicator only where the first two disagree (`harness judge --escalate`), through
the real entry point in child processes: people fill their packets, the round's packets come
apart and are imported apart, and the analysis gets every item's majority of three."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from harness.analysis.plan.plan_file import bundled_plan_path
from harness.study.tables.adjudication import needs
from tests.cli_run import run_subprocess
from tests.judge.conftest import fill_study
from tests.judge.fakes import fill_workbook

N_TOPICS = 16
ROSTER = """reviewers:
  - {id: pri-1, kind: human, capacity: 200}
  - {id: pri-2, kind: human, capacity: 200}
  - {id: adj-1, kind: human, role: adjudicator, capacity: 200}
  - {id: adj-2, kind: human, role: adjudicator, capacity: 200}
  - {id: adj-3, kind: human, role: adjudicator, capacity: 200}
"""


def test_an_item_needs_only_what_its_majority_lacks():
    assert needs([1, 1], 2, 3) == 0  # two who agree settle a majority of three
    assert needs([1, 0], 2, 3) == 1
    assert needs([1], 2, 3) is None  # a verdict outstanding: wait
    assert needs([1, 0, None], 3, 3) == 0  # no more may be added
    assert needs([1, 0, 1, 0], 4, 5) == 1
    assert needs([1, None], 2, 3) == 1  # an excluded `unsure` counts for neither side


def _plan(folder: Path) -> Path:
    text = bundled_plan_path().read_text(encoding="utf-8")
    text = re.sub(r"(?m)^(minimum:\n  topics:) \d+", r"\1 8", text)
    text = re.sub(r"(?m)^(adjudication:\n  topics:) [0-9.]+", r"\1 8", text)
    text = re.sub(r"(?m)^(  per_item:) 2 ", r"\1 3 ", text)
    text = re.sub(r"(?m)^(  combine:) mean ", r"\1 majority ", text)
    text = text.replace("  escalate: false", "  escalate: true")
    assert "escalate: true" in text and "combine: majority" in text
    path = folder / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _blind(study: Path, roster: Path, plan: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_subprocess(
        "judge", "--blind", "--study", str(study), "--reviewers", str(roster), "--no-extract",
        "--no-normalise", "--cutoff", "2000-01-01", "--plan", str(plan), *extra,
    )  # fmt: skip


def _key(study: Path) -> dict[str, str]:
    with sqlite3.connect(study / "study.sqlite") as conn:
        rows = conn.execute(
            "SELECT i.item_id, p.condition FROM items i JOIN outputs o USING (output_id) "
            "JOIN prompts p USING (prompt_id)"
        ).fetchall()
        controls = conn.execute(
            "SELECT i.item_id, c.expected FROM items i JOIN controls c USING (control_id)"
        ).fetchall()
    return dict(rows) | {item: f"control:{expected}" for item, expected in controls}


def _answer(reviewer: str, item: str, key: dict[str, str]) -> str:
    truth = key[item]
    if truth.startswith("control:"):
        return truth.removeprefix("control:")
    right = "not_published" if truth == "cross" else "published"
    # adj-2 gets every cross-field item and half of the others wrong (by a hash of the random
    # item id: with a quarter by hash alone, none of its eight or so items was wrong in about
    # one run in ten), so that the first two adjudicators disagree somewhere
    if reviewer == "adj-2" and (
        truth == "cross" or hashlib.sha256(item.encode()).digest()[0] < 128
    ):
        return "published" if right == "not_published" else "not_published"
    return right


def _fill(packets: list[Path], out: Path, key: dict[str, str]) -> list[str]:
    out.mkdir(exist_ok=True)
    for packet in packets:
        reviewer = re.sub(r"-round-\d+$", "", packet.stem)

        def verdict(item: str, reviewer: str = reviewer) -> tuple[str, int, str]:
            code = _answer(reviewer, item, key)
            return code, 3, "https://doi.org/10.1234/prior" if code == "published" else ""

        fill_workbook(packet, out / packet.name, verdict)
    return [str(out / p.name) for p in packets]


def _adjudicator_assignments(study: Path) -> dict[str, int]:
    with sqlite3.connect(study / "study.sqlite") as conn:
        rows = conn.execute(
            "SELECT a.item_id, COUNT(*) FROM assignments a JOIN reviewers r USING (reviewer_id) "
            "JOIN items i USING (item_id) WHERE r.role = 'adjudicator' AND i.output_id IS NOT "
            "NULL GROUP BY a.item_id"
        ).fetchall()
    return dict(rows)


def test_a_third_adjudicator_goes_only_where_two_disagree(tmp_path: Path):
    fill_study(tmp_path / "study", n_topics=N_TOPICS).close()
    study = tmp_path / "study"
    (tmp_path / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    plan = _plan(tmp_path)
    blind = _blind(study, tmp_path / "roster.yaml", plan, "--same-topic")
    assert blind.returncode == 0, blind.stderr
    assert "2 adjudicators each, more where theirs disagree" in blind.stdout
    assert set(_adjudicator_assignments(study).values()) == {2}
    assert run_subprocess("prereg", "--study", str(study), "--plan", str(plan)).returncode == 0

    key = _key(study)
    first = _fill(sorted((study / "packets").glob("*/*.xlsx")), tmp_path / "returned", key)
    imported = run_subprocess("judge", "--import", "--study", str(study), *first)
    assert imported.returncode == 0, imported.stderr
    assert "harness judge --escalate" in imported.stdout  # the next step names it

    early = run_subprocess("analyze", "--study", str(study))  # unblinding waits for them
    assert early.returncode == 2 and "need another adjudicator" in early.stderr
    assert "harness judge --escalate" in early.stderr and not (study / "report").exists()

    escalated = run_subprocess("judge", "--escalate", "--study", str(study))
    assert escalated.returncode == 0, escalated.stderr
    assert "escalate: round 2" in escalated.stdout
    counts = _adjudicator_assignments(study)
    disputed = [item for item, n in counts.items() if n == 3]
    assert disputed and len(disputed) < len(counts)  # the third only where two disagree
    second = sorted((study / "packets").glob("*/round-2/*.xlsx"))
    assert second
    returned = _fill(second, tmp_path / "returned-2", key)
    imported = run_subprocess("judge", "--import", "--study", str(study), *returned)
    assert imported.returncode == 0, imported.stderr
    again = run_subprocess("judge", "--escalate", "--study", str(study))
    assert "no item needs another adjudicator" in again.stdout

    done = run_subprocess("analyze", "--study", str(study))
    assert done.returncode == 0, done.stderr
    result = json.loads((study / "report" / "report.json").read_text())
    assert result["verdict"]["label"] != "no verdict", result["verdict"]["reason"]
    assert result["adjudication"]["missing"] == []
    late = run_subprocess("judge", "--escalate", "--study", str(study))  # one-way street
    assert late.returncode == 2 and "unblinded" in late.stderr


def test_the_blinding_refuses_adjudicators_too_few_for_a_later_round(tmp_path: Path):
    """Two adjudicators cannot give any item a third: refused before anything is routed, since
    the roster is fixed once it is."""
    fill_study(tmp_path / "study", n_topics=N_TOPICS).close()
    roster = tmp_path / "roster.yaml"
    roster.write_text(
        ROSTER.replace("  - {id: adj-3, kind: human, role: adjudicator, capacity: 200}\n", "")
    )
    done = _blind(tmp_path / "study", roster, _plan(tmp_path), "--same-topic")
    assert done.returncode == 2, done.stdout
    assert "adjudication.per_item=3 (2 first, escalate)" in done.stderr


def test_escalate_is_refused_when_the_plan_does_not_escalate(tmp_path: Path):
    fill_study(tmp_path / "study", n_topics=4).close()
    (tmp_path / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    done = run_subprocess("judge", "--escalate", "--study", str(tmp_path / "study"))
    assert done.returncode == 2
    assert "does not escalate" in done.stderr and "adjudication.escalate" in done.stderr


@pytest.mark.parametrize("combine", ["mean"])
def test_the_plan_refuses_escalate_without_a_majority(tmp_path: Path, combine: str):
    from harness.analysis.plan.plan_file import Adjudication

    with pytest.raises(ValueError, match="escalate: true needs combine: majority"):
        Adjudication(combine=combine, escalate=True)
    assert Adjudication(per_item=3, combine="majority", escalate=True).first_round == 2
    assert Adjudication(per_item=5, combine="majority", escalate=True).first_round == 3


AUTOMATED = """reviewers:
  - {id: p1, kind: automated, method: retrieval, capacity: 100000}
  - {id: p2, kind: automated, method: retrieval-dense, capacity: 100000}
  - {id: a1, kind: automated, method: "llm:openai/judge-a", role: adjudicator, capacity: 100000}
  - {id: a2, kind: automated, method: "llm:openai/judge-b", role: adjudicator, capacity: 100000}
  - {id: a3, kind: automated, method: "llm:openai/judge-c", role: adjudicator, capacity: 100000}
"""


def _replies(body: dict[str, object]) -> str:
    """The `llm:` reply protocol; judge-b calls a quarter of the items published."""
    messages = body.get("messages") or []
    assert isinstance(messages, list)
    if not any(m.get("role") == "assistant" for m in messages):
        return "SEARCH: sediment transport"
    asked = next(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    item = hashlib.sha256(asked.encode()).digest()[0]
    wrong = body.get("model") == "judge-b" and item < 64
    return "VERDICT: published" if wrong else "VERDICT: not_published"


def test_harness_runs_the_rounds_of_automated_adjudicators(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """`harness run`'s rounds (`run._escalated`): the items the automated adjudicators dispute
    go to the third one, who reviews them, until every item has its majority."""
    from harness.pipeline.runner import _escalated
    from harness.study.store import Study
    from harness.study.tables.adjudication import items_to_escalate
    from tests.servers.openai_server import OpenAIServer

    fill_study(tmp_path / "study", n_topics=N_TOPICS).close()
    study = tmp_path / "study"
    (tmp_path / "roster.yaml").write_text(AUTOMATED, encoding="utf-8")
    plan = _plan(tmp_path)
    blind = _blind(study, tmp_path / "roster.yaml", plan, "--no-bank-controls")
    assert blind.returncode == 0, blind.stderr
    assert run_subprocess("prereg", "--study", str(study), "--plan", str(plan)).returncode == 0
    monkeypatch.setenv("HARNESS_LITERATURE_CACHE", str(tmp_path / "cache"))
    with OpenAIServer(reply_text=_replies) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        first = run_subprocess("judge", "--auto", "--study", str(study))
        assert first.returncode == 0, first.stderr
        with Study.open(study) as s:
            disputed = items_to_escalate(s, 3, "not_novel")
        assert disputed and set(disputed.values()) == {1}
        lines = _escalated(study)
    assert lines and lines[0].startswith("escalate: round 2")
    counts = _adjudicator_assignments(study)
    assert sorted(i for i, n in counts.items() if n == 3) == sorted(disputed)
    with Study.open(study) as s:
        assert items_to_escalate(s, 3, "not_novel") == {}
    done = run_subprocess("analyze", "--study", str(study))
    assert done.returncode == 0, done.stderr
