"""The public Python API: stage modules are callable like their functions, names resolve lazily."""

from __future__ import annotations

import harness


def test_stage_modules_are_callable_after_import():
    import harness.analysis
    import harness.generate

    assert callable(harness.generate) and callable(harness.analyze)
    assert harness.generate.generate.__name__ == "generate"
    assert harness.analyze is harness.analysis.analyze


def test_public_names_resolve():
    for name in harness.__all__:
        assert getattr(harness, name) is not None, name
