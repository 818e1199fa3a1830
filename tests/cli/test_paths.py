"""A study folder whose path has spaces and non-ASCII characters works through the real CLI."""

from __future__ import annotations

import json

from tests.cli.test_errors import run_harness


def test_generate_status_verify_on_an_awkward_path(tmp_path):
    study = tmp_path / "dossier d'étude" / "Studie Ölçüm 研究 1"
    result = run_harness(
        "--log-level",
        "info",
        "generate",
        "--study",
        str(study),
        "--limit",
        "3",
        "--pilot",
        "--seed",
        "7",
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    result = run_harness("status", "--study", str(study))
    assert result.returncode == 0, result.stderr
    assert "generate" in result.stdout and "9" in result.stdout  # 3 topics x 3 conditions
    result = run_harness("verify", "--study", str(study))
    assert result.returncode == 0, result.stderr
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["commands"][0]["stage"] == "generate"
    log = (study / "logs" / "harness.log").read_text(encoding="utf-8")
    assert "command generate finished in" in log and "command status finished in" in log
