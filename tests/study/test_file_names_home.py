"""The names of a study folder's files live in harness/study/files.py: no module of the package
outside harness/study/ spells them, so code elsewhere asks `is_study`, `store_path` or
`manifest_path`, and a renamed file changes one module.

The rule, on the syntax tree of every module outside harness/study/: no string constant (a
docstring or an f-string's literal part included) holds one of the names as a file name, that
is not inside a longer word (`harness.study.lock`, the module, is not the lock file).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from harness.study import files

PACKAGE = Path(__file__).resolve().parents[2] / "harness"
HOME = "study"
NAMES = (
    files.STORE_NAME,
    files.MANIFEST_NAME,
    files.MANIFEST_LOCK_NAME,
    files.LOCK_NAME,
    files.HOLDER_NAME,
)
_NAME = re.compile("|".join(rf"(?<!\w){re.escape(n)}(?!\w)" for n in NAMES))


def spelled_names(source: str, filename: str) -> list[str]:
    """`file:line: name` for every study file name in a string constant of `source`."""
    return [
        f"{filename}:{node.lineno}: {match.group()}"
        for node in ast.walk(ast.parse(source, filename))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        for match in _NAME.finditer(node.value)
    ]


def test_no_module_outside_the_study_package_spells_a_study_file_name() -> None:
    modules = [p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(PACKAGE).parts[0] != HOME]
    assert len(modules) > 50  # the walk found the package
    found = [
        v
        for p in modules
        for v in spelled_names(p.read_text(encoding="utf-8"), str(p.relative_to(PACKAGE.parent)))
    ]
    assert not found, (
        "study file names outside harness/study/ (use harness.study.is_study / store_path / "
        "manifest_path):\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    "source",
    [
        'db = folder / "study.sqlite"\n',
        'print(f"stored in {folder}/study.sqlite")\n',
        'path = folder / "manifest.json"\n',
        "'''Written to `manifest.json`.'''\n",
        'note = folder / ".study.lock.json"\n',
        'lock = FileLock(folder / ".manifest.lock")\n',
        'lock = folder / ".study.lock"\n',
    ],
)
def test_a_spelled_name_is_found(source: str) -> None:
    assert spelled_names(source, "m.py")


@pytest.mark.parametrize(
    "source",
    [
        "from harness.study.lock import writes_study\n",
        'importlib.import_module("harness.study.lock")\n',
        'name = "my_study.sqlite_backup"\n',
        'text = "the manifest records it"\n',
    ],
)
def test_other_text_is_left_alone(source: str) -> None:
    assert not spelled_names(source, "m.py")


def test_the_folder_functions_name_the_files() -> None:
    folder = Path("runs") / "demo"
    assert files.store_path(folder) == folder / files.STORE_NAME
    assert files.manifest_path(str(folder)) == folder / files.MANIFEST_NAME


def test_is_study_needs_the_store(tmp_path: Path) -> None:
    assert not files.is_study(tmp_path)
    files.store_path(tmp_path).touch()
    assert files.is_study(tmp_path)
