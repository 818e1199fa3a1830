"""The CLI starts fast: --help and status never import the heavy libraries, and `import harness`
and --help leave out the costly helpers that only running a stage needs."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "datasets", "statsmodels", "pandas", "sklearn")

# Loaded by the functions that use them, never by `import harness` or `harness --help`: the
# libraries a stage needs and the stage modules themselves (the standard library's modules are
# imported at the tops of the modules that use them; benchmarks/bench_startup.py times --help).
NOT_AT_STARTUP = (
    *HEAVY,
    "numpy",
    "pydantic",
    "jinja2",
    "yaml",
    "openpyxl",
    "httpx",
    "openai",
    "rich",
    "harness.collection",
    "harness.models",
    "harness.judge",
    "harness.analysis",
    "harness.study.manifest",
    "harness.status.next_command",
    "harness.geometry",  # the numpy attention library; `harness.run_probe` loads it when it runs
)

PROBE = """
import sys
from harness.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
loaded = [m for m in {names!r} if m in sys.modules]
print("LOADED:" + ",".join(loaded))
"""


def run(*args: str, names: tuple[str, ...] = HEAVY) -> str:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(names=names), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def loaded_by_typer(names: tuple[str, ...]) -> set[str]:
    """Of `names`, those `import typer` loads itself (older typer loads json, logging, random)."""
    code = f"import sys, typer; print(','.join(m for m in {names!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(filter(None, out.stdout.strip().split(",")))


def test_help_imports_nothing_heavy():
    out = run("--help", names=NOT_AT_STARTUP)
    assert "generate" in out
    loaded = set(filter(None, out.strip().rpartition("LOADED:")[2].split(",")))
    assert loaded <= loaded_by_typer(NOT_AT_STARTUP), "harness --help loads more than typer"


def test_import_harness_leaves_stage_helpers_out():
    code = f"import sys, harness; print([m for m in {NOT_AT_STARTUP!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_status_imports_nothing_heavy(tmp_path):
    from tests.judge.conftest import fill_study

    fill_study(tmp_path / "s", n_topics=1).close()  # status refuses a store where nothing ran
    out = run("status", "--study", str(tmp_path / "s"))
    assert "generate" in out
    assert out.strip().endswith("LOADED:")


def test_the_closing_line_loads_no_stage_run():
    """Every stage ends with `next_step`'s line: asking which models a study serves reads the
    store, so the line loads neither the collect run nor the judge's item making (which bring
    the backends and the HTTP clients)."""
    stages = (
        "harness.collection.collect_stage",
        "harness.judge.items.blinded_items",
        "harness.judge.blinding.blind_stage",
        "openai",
        "httpx",
        *HEAVY,
        "numpy",
    )
    code = f"import sys, harness.cli._next\nprint([m for m in {stages!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
