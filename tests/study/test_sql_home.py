"""SQL lives in harness/study/: no other module of the package writes a statement or passes one
to the store, so a schema change touches only the study package.

The rule, on the syntax tree of every module outside harness/study/:

- a string constant (an f-string's literal parts included) is SQL when it starts, after
  whitespace, with a statement keyword followed by what that statement needs next (`SELECT x`,
  `INSERT INTO|OR`, `UPDATE t SET`, `DELETE FROM`, `CREATE|DROP TABLE|INDEX|VIEW|TRIGGER`,
  `ALTER TABLE`, `WITH name AS (`, `PRAGMA name`, `REPLACE INTO`), in any case. Requiring the
  second word keeps English such as " with probability " or "Create a batch" out;
- a call is a store call when it runs SQL (`.execute`, `.executemany`, `.executescript` with an
  argument; pandas' `read_sql*`), passes SQL to the Study's generic helpers (`.rows(...)`,
  `.frame(...)` with an argument), or counts a store table (`.count("TABLE", ...)` naming a
  table of the schema, or with `where=`/`params=`). `Series.count()`, `str.count("x")` and
  `list.count(x)` are left alone.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from harness.study.schema import SCHEMA

PACKAGE = Path(__file__).resolve().parents[2] / "harness"
HOME = "study"
EXEMPT: tuple[str, ...] = ()

_SQL = re.compile(
    r"\s*(?:SELECT\s+\S"
    r"|INSERT\s+(?:INTO|OR)\b"
    r"|UPDATE\s+(?:OR\s+\w+\s+)?[\w.\"]+\s+SET\b"
    r"|DELETE\s+FROM\b"
    r"|CREATE\s+(?:UNIQUE\s+|TEMP\s+|TEMPORARY\s+|VIRTUAL\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\b"
    r"|DROP\s+(?:TABLE|INDEX|VIEW|TRIGGER)\b"
    r"|ALTER\s+TABLE\b"
    r"|WITH\s+(?:RECURSIVE\s+)?\w+(?:\s*\([^)]*\))?\s+AS\s*\("
    r"|PRAGMA\s+\w"
    r"|REPLACE\s+INTO\b)",
    re.IGNORECASE,
)
TABLES = frozenset(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", SCHEMA))
_RUNS_SQL = {"execute", "executemany", "executescript"}
_GENERIC = {"rows", "frame"}
_PANDAS_SQL = {"read_sql", "read_sql_query", "read_sql_table"}


def looks_like_sql(text: str) -> bool:
    return _SQL.match(text) is not None


def is_store_call(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name in _PANDAS_SQL:
        return True
    if not isinstance(func, ast.Attribute):
        return False
    has_args = bool(call.args or call.keywords)
    if name in _RUNS_SQL or name in _GENERIC:
        return has_args
    if name != "count":
        return False
    first = call.args[0] if call.args else None
    names_table = (
        isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value in TABLES
    )
    return names_table or any(k.arg in ("where", "params") for k in call.keywords)


def violations(source: str, filename: str) -> list[str]:
    """`file:line: what` for every SQL string and store call in `source`."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if looks_like_sql(node.value):
                found.append(f"{filename}:{node.lineno}: SQL text {node.value.strip()[:50]!r}")
        elif isinstance(node, ast.Call) and is_store_call(node):
            found.append(f"{filename}:{node.lineno}: store call {ast.unparse(node)[:60]}")
        elif isinstance(node, ast.Attribute) and node.attr == "conn":
            # the store's connection is how SQL gets in; stages pass the Study itself
            found.append(f"{filename}:{node.lineno}: store connection {ast.unparse(node)[:60]}")
    return found


def _modules() -> list[Path]:
    return [
        p
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.relative_to(PACKAGE).parts[0] not in (HOME, *EXEMPT)
    ]


def test_no_module_outside_the_study_package_speaks_sql() -> None:
    modules = _modules()
    assert len(modules) > 50  # the walk found the package
    found = [
        v
        for p in modules
        for v in violations(p.read_text(encoding="utf-8"), str(p.relative_to(PACKAGE.parent)))
    ]
    assert not found, (
        "SQL outside harness/study/ (move it to harness/study/tables/):\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * FROM prompts",
        "\n  select item_id from items",
        "SELECT 1",
        "INSERT INTO topics VALUES (?)",
        "insert or replace into meta values (?, ?)",
        "UPDATE meta SET value = ? WHERE key = 'schema_version'",
        "DELETE FROM searches WHERE item_id = ?",
        "CREATE TABLE x (a TEXT)",
        "create unique index i on t(a)",
        "DROP TABLE items",
        "ALTER TABLE items_v2 RENAME TO items",
        "WITH counts AS (SELECT 1) SELECT * FROM counts",
        "PRAGMA foreign_keys=ON",
        "REPLACE INTO meta VALUES (?, ?)",
    ],
)
def test_sql_text_is_recognised(text: str) -> None:
    assert looks_like_sql(text)


@pytest.mark.parametrize(
    "text",
    [
        " with probability ",
        "    with ",
        "Create a batch. Creating is not idempotent",
        "Drop finished rows, then cache columns",
        "Replace every known secret",
        "Update the manifest from the store",
        "Delete nothing",
        "selection",
        "the SELECT statement",
    ],
)
def test_english_is_not_taken_for_sql(text: str) -> None:
    assert not looks_like_sql(text)


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("conn.execute(sql)", True),
        ("study.conn.executemany(INSERT, rows)", True),
        ("conn.executescript(script)", True),
        ("study.rows(QUERY, (key,))", True),
        ("s.frame(TABLES[name].sql(unblinded=True))", True),
        ("study.count('outputs')", True),
        ("handle.count('prompts', 'model_key = ?', (k,))", True),
        ("study.count(table, where='x = 1')", True),
        ("pd.read_sql_query(q, conn)", True),
        ("read_sql(q, conn)", True),
        ("series.count()", False),
        ("text.count('\\n')", False),
        ("values.count(item)", False),
        ("table.frame()", False),
        ("pool.execute()", False),
        ("print('x')", False),
    ],
)
def test_store_calls_are_told_from_other_methods(source: str, flagged: bool) -> None:
    assert bool(violations(source, "snippet.py")) is flagged


def test_a_violation_names_file_and_line() -> None:
    source = 'x = 1\nrows = study.rows("SELECT item_id FROM items")\n'
    assert sorted(violations(source, "harness/example.py")) == [
        "harness/example.py:2: SQL text 'SELECT item_id FROM items'",
        "harness/example.py:2: store call study.rows('SELECT item_id FROM items')",
    ]


def test_f_string_parts_are_checked() -> None:
    assert violations('q = f"INSERT INTO topics VALUES ({marks})"\n', "m.py")


def test_the_store_connection_is_flagged() -> None:
    assert violations("sha = commitment(study.conn)\n", "x.py") == [
        "x.py:1: store connection study.conn"
    ]
