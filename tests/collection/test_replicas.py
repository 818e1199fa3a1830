"""`harness collect` against several replicas of one model, through the real CLI."""

from __future__ import annotations

from harness.study import Study
from harness.study.manifest import read_manifest
from tests.collection.conftest import cli

BASE = ["--model", "openai-compatible/gpt-4o-mini", "--samples", "2", "--max-tokens", "8"]
KEY = "openai-compatible/gpt-4o-mini"


def statuses(study) -> list[tuple[str, int, str]]:
    with Study.open(study) as s:
        return [
            tuple(r) for r in s.rows("SELECT prompt_id, sample, status FROM outputs ORDER BY 1, 2")
        ]


def test_collect_spreads_over_replicas_and_survives_a_dead_one(study, serve, key):
    live = [serve(), serve()]
    dead = serve()
    dead.kill()  # a node that is down from the start (its port stays refused)
    urls = [live[0].base_url, dead.base_url, live[1].base_url]
    args = ["collect", "--study", str(study), *BASE, "--concurrency", "2", "--max-attempts", "2"]
    process = cli([*args, "--base-url", urls[0], "--base-url", f"{urls[1]},{urls[2]}"])
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    rows = statuses(study)
    assert len(rows) == 24 and {r[2] for r in rows} == {"ok"}
    assert all(s.log.counts["requests"] > 0 for s in live)
    section = read_manifest(study).record()["collect"]["models"][KEY]
    assert section["base_url"] == urls
    run = section["runs"][-1]
    assert run["replicas"][dead.base_url]["served"] == 0
    assert sum(r["served"] for r in run["replicas"].values()) == 12
    assert run["replicas"][dead.base_url]["taken_out"] >= 1


def test_a_rerun_may_leave_a_replica_out_but_not_add_a_server(study, serve, key):
    a, b, c = serve(), serve(), serve()
    args = ["collect", "--study", str(study), *BASE[:2], "--max-tokens", "8"]
    process = cli(
        [
            *args,
            "--samples",
            "1",
            "--model-arg",
            f"{KEY}@base_url={a.base_url}",
            "--model-arg",
            f"{KEY}@base_url={b.base_url}",
        ]
    )
    assert process.communicate(timeout=120) and process.returncode == 0
    assert read_manifest(study).record()["collect"]["models"][KEY]["base_url"] == [
        a.base_url,
        b.base_url,
    ]
    # without a URL the rerun goes to the recorded replicas; with one of them only, to it
    process = cli([*args, "--samples", "2", "--base-url", b.base_url])
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    process = cli([*args, "--samples", "3"])
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert f"endpoint {b.base_url}, as recorded in the study" in out
    process = cli([*args, "--samples", "4", "--base-url", b.base_url, "--base-url", c.base_url])
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2 and "--new-endpoint" in err and c.base_url in err
    assert c.log.counts["requests"] == 0
    assert {r[2] for r in statuses(study)} == {"ok"} and len(statuses(study)) == 36
