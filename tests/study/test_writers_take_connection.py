"""Every writer in harness/study/tables/ takes the connection of the caller's transaction, never
the Study: the stage that calls it opens the transaction (`with study.transaction() as conn:`)
and so decides what commits together.

A function of a table module is a writer when its name starts with a writer's verb (`insert_`,
`store_`, `write_`, `save_`, `delete_`, `update_`, `mark_`, `set_`), when its body holds SQL that
changes rows (a string constant, or a module-level string it names), or when it calls another
writer of its module. A writer's first parameter is a `sqlite3.Connection`, and no parameter
is a `Study`. Reads named like writers are listed in READS, and must hold no changing SQL.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sqlite3
import types
import typing
from pathlib import Path

import pytest

from harness.study.store import Study

TABLES = Path(__file__).resolve().parents[2] / "harness" / "study" / "tables"
VERBS = ("insert_", "store_", "write_", "save_", "delete_", "update_", "mark_", "set_")
#: Reads whose names start with a writer's verb.
READS = frozenset({"store_counts"})
_CHANGES = re.compile(r"\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)


def _changing_sql(node: ast.FunctionDef, module: types.ModuleType) -> bool:
    for sub in ast.walk(node):
        text = None
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            text = sub.value
        elif isinstance(sub, ast.Name) and isinstance(getattr(module, sub.id, None), str):
            text = getattr(module, sub.id)
        if text is not None and _CHANGES.match(text):
            return True
    return False


def _called(node: ast.FunctionDef) -> set[str]:
    return {
        c.func.id
        for c in ast.walk(node)
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
    }


def writers(module: types.ModuleType, source: str) -> dict[str, bool]:
    """Name -> whether it changes rows by SQL, for every writer defined in `module`."""
    functions = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}
    by_sql = {name for name, node in functions.items() if _changing_sql(node, module)}
    found = by_sql | {n for n in functions if n.startswith(VERBS) and n not in READS}
    grown = True
    while grown:  # a function that calls a writer of this module (or one it imports) writes
        known = found | {n for n in vars(module) if n.startswith(VERBS) and n not in READS}
        more = {n for n, node in functions.items() if _called(node) & known} - found
        found |= more
        grown = bool(more)
    return {name: name in by_sql for name in found}


def _mentions_study(hint: object) -> bool:
    return hint is Study or any(_mentions_study(a) for a in typing.get_args(hint))


def problems(module: types.ModuleType, source: str) -> list[str]:
    """`module.function: what` for every writer that does not take the caller's connection."""
    found = []
    for name in sorted(writers(module, source)):
        function = getattr(module, name)
        hints = typing.get_type_hints(function, vars(module))
        parameters = list(inspect.signature(function).parameters)
        where = f"{module.__name__}.{name}"
        if not parameters or hints.get(parameters[0]) is not sqlite3.Connection:
            found.append(f"{where}: first parameter is not a sqlite3.Connection")
        found += [
            f"{where}: parameter {p!r} is a Study"
            for p in parameters
            if _mentions_study(hints.get(p))
        ]
    return found


def _table_modules() -> list[tuple[types.ModuleType, str]]:
    return [
        (importlib.import_module(f"harness.study.tables.{p.stem}"), p.read_text(encoding="utf-8"))
        for p in sorted(TABLES.glob("*.py"))
        if p.stem != "__init__"
    ]


def test_every_table_writer_takes_the_callers_connection() -> None:
    modules = _table_modules()
    found = [v for module, source in modules for v in problems(module, source)]
    assert not found, "writers must take the transaction's connection:\n" + "\n".join(found)


def test_the_walk_finds_the_writers() -> None:
    names = {n for module, source in _table_modules() for n in writers(module, source)}
    assert {
        "insert_topics",
        "insert_prompts",
        "store_outputs",
        "insert_measures",
        "write_meta",
        "insert_simulated_prompts",
        "insert_reviews",
        "mark_replaced",
        "set_display_text",
    } <= names


def test_reads_named_like_writers_change_no_rows() -> None:
    for module, source in _table_modules():
        by_sql = {n for n, sql in writers(module, source).items() if sql}
        assert not by_sql & READS, f"{module.__name__}: {sorted(by_sql & READS)} write"


def _module(source: str) -> tuple[types.ModuleType, str]:
    module = types.ModuleType("harness.study.tables.example")
    exec(compile(source, "example.py", "exec"), vars(module))  # noqa: S102 (fixed test text)
    return module, source


HEADER = (
    "from __future__ import annotations\nimport sqlite3\nfrom harness.study.store import Study\n"
)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "def insert_x(study: Study, rows: list[str]) -> None:\n    pass\n",
            [
                "harness.study.tables.example.insert_x: first parameter is not a sqlite3.Connection",
                "harness.study.tables.example.insert_x: parameter 'study' is a Study",
            ],
        ),
        (
            "_ADD = 'INSERT INTO x VALUES (?)'\n"
            "def add_x(study: Study) -> None:\n    study.conn.execute(_ADD, (1,))\n",
            [
                "harness.study.tables.example.add_x: first parameter is not a sqlite3.Connection",
                "harness.study.tables.example.add_x: parameter 'study' is a Study",
            ],
        ),
        (
            "def save_x(conn: sqlite3.Connection, study: Study | None) -> None:\n    pass\n",
            ["harness.study.tables.example.save_x: parameter 'study' is a Study"],
        ),
        (
            "def insert_x(conn: sqlite3.Connection) -> None:\n    pass\n"
            "def fill(study: Study) -> None:\n    insert_x(study.conn)\n",
            [
                "harness.study.tables.example.fill: first parameter is not a sqlite3.Connection",
                "harness.study.tables.example.fill: parameter 'study' is a Study",
            ],
        ),
        ("def insert_x(conn: sqlite3.Connection, n: int) -> None:\n    pass\n", []),
        ("def x_count(study: Study) -> int:\n    return study.count('x')\n", []),
        ("def store_counts(study: Study) -> int:\n    return 0\n", []),
    ],
)
def test_a_writer_taking_the_study_is_reported(source: str, expected: list[str]) -> None:
    assert problems(*_module(HEADER + source)) == expected
