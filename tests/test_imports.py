"""Every module of the package imports, so a deferred import cannot hide a missing dependency."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import harness

MODULES = sorted(info.name for info in pkgutil.walk_packages(harness.__path__, "harness."))


def test_walk_finds_the_package():
    assert {"harness.cli", "harness.models.openai_api", "harness.study.manifest"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    importlib.import_module(name)
