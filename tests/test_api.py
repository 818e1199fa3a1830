"""The public Python API: every exported name is what it says both times it is looked up, and
the stages run from Python on a small pilot study."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

import harness
from tests.judge.fakes import fill_workbook
from tests.plans import primary_only_plan
from tests.servers.openai_server import OpenAIServer

CLASSES = {"Study", "HarnessError"}
KEY = "sk-test-api-Qe7vNw2Lp4"
ROSTER = """reviewers:
  - {id: rev-a, kind: human, expertise: [Computer Science, Mathematics], capacity: 20}
  - {id: rev-b, kind: human, expertise: [Neuroscience], capacity: 20}
  - {id: rev-c, kind: human, expertise: [Physics and Astronomy, Engineering], capacity: 20}
"""


@pytest.mark.parametrize("name", sorted(set(harness.__all__) - {"__version__"}))
def test_each_name_keeps_its_type(name):
    """Importing the stage modules must not replace a function with its module (the failure of
    `harness.collect` when the package attribute was rebound on import)."""
    first = getattr(harness, name)
    for module in (
        "harness.generation.generate_stage",
        "harness.collection.collect_stage",
        "harness.analysis.run",
    ):
        importlib.import_module(module)
    second = getattr(harness, name)
    assert first is second
    kind = inspect.isclass if name in CLASSES else inspect.isfunction
    assert kind(first), f"harness.{name} is {type(first).__name__}"


def test_no_stage_function_shares_its_name_with_its_module():
    """A module named like the function it defines (`harness.judge.blind.blind`) makes
    `from package import name` give the function or the module depending on what was imported.
    A package's own function (`harness.export.export`) has no module to be confused with."""
    functions = [
        getattr(harness, n) for n in harness.__all__ if inspect.isfunction(getattr(harness, n))
    ]
    clashes = [
        f"{f.__module__}.{f.__name__}"
        for f in functions
        if f.__module__.rsplit(".", 1)[-1] == f.__name__
        and not hasattr(sys.modules[f.__module__], "__path__")
    ]
    assert clashes == []


def test_version_and_all():
    assert isinstance(harness.__version__, str)
    assert set(harness.__all__) >= {
        "generate",
        "collect",
        "collect_models",
        "blind",
        "analyze",
        "import_reviews",
        "search",
        "prereg",
        "power",
        "run_study",
        "study_status",
        "Study",
        "HarnessError",
    }
    assert len(harness.__all__) == len(set(harness.__all__))


def test_import_loads_no_heavy_library():
    code = (
        "import sys, harness\n"
        "heavy = ('numpy', 'pandas', 'scipy', 'statsmodels', 'sklearn', 'matplotlib', 'torch',\n"
        "         'transformers', 'datasets', 'openai', 'httpx', 'jinja2')\n"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_collect_takes_one_model_or_several(tmp_path, monkeypatch):
    """One model gives one result, a list of models a list; a lone string is one model."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    study = tmp_path / "s"
    harness.generate(study, limit=1, pilot=True)
    with OpenAIServer(api_key=KEY) as server:
        one = harness.collect(study, model="openai/m1", base_url=server.base_url)
        urls = [f"openai/m{n}@base_url={server.base_url}" for n in (1, 2)]
        several = harness.collect(study, models=["openai/m1", "openai/m2"], model_args=urls)
        lone = harness.collect(study, models="openai/m2", model_args=urls[1:])
    assert not isinstance(one, list) and one.model_key == "openai/m1" and one.completed == 3
    assert [r.model_key for r in several] == ["openai/m1", "openai/m2"]
    assert [r.completed for r in several] == [0, 3]  # m1 had its outputs already
    assert [r.model_key for r in lone] == ["openai/m2"] and lone[0].completed == 0


def test_stages_from_python(tmp_path, monkeypatch):
    """generate -> prereg -> collect -> blind -> import_reviews -> analyze -> status, and the
    planning and literature functions, all called as `harness.<name>(...)`."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    study = tmp_path / "study"
    audit = harness.generate(study, limit=4, pilot=True)
    assert audit.n_topics == 4 and audit.structure_ok
    assert harness.prereg(study, plan=primary_only_plan(tmp_path)).path.exists()
    with OpenAIServer(api_key=KEY) as server:
        result = harness.collect(study, backend="openai", model="m", base_url=server.base_url)
    assert result.completed == 12 and result.pending == 0

    roster = tmp_path / "roster.yaml"
    roster.write_text(ROSTER, encoding="utf-8")
    blinded = harness.blind(
        study,
        reviewers=roster,
        k=2,
        extract=False,
        normalise=False,
        distinct_topics=False,
        bank_controls=False,
    )
    assert len(blinded.packets) == 12  # four files for each of three reviewers
    returned = tmp_path / "returned"
    returned.mkdir()
    for packet in sorted((study / "packets").glob("*/*.xlsx")):
        fill_workbook(packet, returned / packet.name)
    with harness.Study.open(study) as opened:
        imported = harness.import_reviews(opened, sorted(returned.glob("*.xlsx")))
    assert len(imported) == 3

    analysis = harness.analyze(study)
    assert analysis.verdict.label and (study / "report" / "report.md").exists()
    stages = {s.stage: s for s in harness.study_status(study)}
    assert stages["reviews"].holds == "24 reviews"

    assert harness.power(topics=50, p_single=0.3, effect=0.1).inputs["topics"] == 50
    assert harness.read_table(study, "prompts").shape[0] == 12
    with pytest.raises(harness.HarnessError):
        harness.search("   ")
