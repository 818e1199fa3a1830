"""Every command's help has a one-line summary and an example."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness.cli._app import app

COMMANDS = [
    [],
    ["generate"],
    ["collect"],
    ["judge"],
    ["analyze"],
    ["prereg"],
    ["power"],
    ["search"],
    ["status"],
    ["verify"],
    ["run"],
    ["export"],
    ["export", "prompts"],
    ["geometry"],
    ["geometry", "scaling"],
    ["geometry", "fields"],
    ["geometry", "heatmap"],
    ["geometry", "probe"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "harness")
def test_help_has_summary_and_example(command):
    import harness.cli  # noqa: F401  (registers every command)

    result = CliRunner().invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    body = result.output.split("Usage:", 1)[1].split("\n\n", 1)[1]
    assert body.strip().splitlines()[0].strip()  # a summary line
    assert "Example: harness" in " ".join(result.output.split())
