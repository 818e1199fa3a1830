"""The CLI starts fast: --help and status never import the heavy libraries."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "datasets", "statsmodels", "pandas", "sklearn")

PROBE = """
import sys
from harness.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = [m for m in {heavy!r} if m in sys.modules]
print("HEAVY:" + ",".join(heavy))
"""


def run(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def test_help_imports_nothing_heavy():
    out = run("--help")
    assert "generate" in out
    assert out.strip().endswith("HEAVY:")


def test_status_imports_nothing_heavy(tmp_path):
    from harness.study import Study

    Study.open(tmp_path / "s", create=True).close()
    out = run("status", "--study", str(tmp_path / "s"))
    assert "generate" in out
    assert out.strip().endswith("HEAVY:")
