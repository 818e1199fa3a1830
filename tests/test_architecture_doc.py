"""docs/architecture.md names only files and modules that exist, and its layer list is the one
tests/test_layers.py checks.

What counts as a name, and where it is looked for:

- a path ending in `.py` or `.md`, or a directory in backticks ending in `/`: with a slash, from
  the repository root, else from the section's package (a `### harness/x/` heading; a heading may
  name several), else from harness/; a bare `name.py` from the current package directory: the
  section's, narrowed by a `` `sub/`: `` marker (a list item or a phrase that starts with a
  sub-package, or with one of the heading's packages), which holds to the end of its paragraph or
  list item; outside a package section,
  harness/. A bare `name.md` is in docs/. A name right after `*`, `<` or `>` is a pattern
  (`*_cmds.py`) and is skipped;
- a dotted name `harness.a.b`, or in backticks one that starts with a top-level unit of the
  package (`models.base`; `study.yaml` is a file): a module, or a module and one name it defines
  or imports.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_layers import LAYERS, Layers

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"

_FILE = re.compile(r"(?<![\w./*<>-])((?:[\w-]+/)*[\w-]+\.(?:py|md))(?![\w/])")
_DIR = re.compile(r"`((?:[\w-]+/)+)`")
_MARKER = re.compile(r"`((?:[\w-]+/)+)`:")
_DOTTED = re.compile(r"(?<![\w./])(harness(?:\.\w+)+)|`(\w+(?:\.\w+)+)`")
_HEADING_DIR = re.compile(r"((?:[\w-]+/)+)")
_SUFFIXES = {"py", "md", "yaml", "json", "toml", "sqlite", "csv", "html", "txt"}


def layer_block(text: str) -> Layers:
    """The layers of the doc's ```layers fenced block, `name: unit unit ...` a line."""
    block = re.search(r"^```layers\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert block, "no ```layers block"
    layers = []
    for line in block.group(1).splitlines():
        name, _, units = line.partition(":")
        layers.append((name.strip(), tuple(units.split())))
    return tuple(layers)


def _top_nodes(tree: ast.Module) -> list[ast.stmt]:
    """The module's statements, those under `if TYPE_CHECKING:` included (the package root
    names its lazily imported API there)."""
    nodes: list[ast.stmt] = []
    for node in tree.body:
        is_checking = isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
        nodes.extend(node.body if is_checking else [node])
    return nodes


def _defines(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in _top_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = {node.name}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found = {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found = {(a.asname or a.name).split(".")[0] for a in node.names}
        else:
            continue
        if name in found:
            return True
    return False


def _module_exists(dotted: str, root: Path) -> bool:
    parts = dotted.split(".")
    for n in (len(parts), len(parts) - 1):
        base = root.joinpath(*parts[:n])
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return n == len(parts) or _defines(path, parts[-1])
    return False


def _paragraphs(text: str) -> list[tuple[list[Path], str]]:
    """(package directories of the section, text) for every paragraph or list item."""
    found: list[tuple[list[Path], str]] = []
    dirs: list[Path] = []
    in_fence = False
    for block in re.split(r"\n(?=\s*\n|- |### |```)", text):
        stripped = block.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence or stripped.count("```") > 1
            continue
        if in_fence:
            continue
        if stripped.startswith("### "):
            heading = stripped.splitlines()[0]
            dirs = [ROOT / d for d in _HEADING_DIR.findall(heading)]
            stripped = stripped[len(heading) :]
        elif stripped.startswith("## "):
            dirs = []
        found.append((dirs, stripped))
    return found


def _tokens(para: str) -> list[tuple[int, str, str]]:
    """(position, kind, name) of every name in a paragraph, in order."""
    found = [(m.start(), "file", m.group(1)) for m in _FILE.finditer(para)]
    found += [(m.start(), "dir", m.group(1)) for m in _DIR.finditer(para)]
    found += [(m.start(), "marker", m.group(1)) for m in _MARKER.finditer(para)]
    found += [(m.start(), "dotted", m.group(1) or m.group(2)) for m in _DOTTED.finditer(para)]
    return sorted(found, key=lambda t: (t[0], t[1] != "marker"))


def _exists(kind: str, name: str, bases: list[Path], sub: str, root: Path) -> bool:
    package = root / "harness"
    if kind == "dotted":
        units = {p.stem for p in package.iterdir() if p.suffix == ".py" or p.is_dir()}
        parts = name.split(".")
        if parts[-1] in _SUFFIXES:  # a file name (`study.yaml`), not a module
            return True
        if parts[0] != "harness":
            if parts[0] not in units:
                return True  # not the package's (`study.transaction`)
            name = f"harness.{name}"
        return _module_exists(name, root)
    if "/" in name.rstrip("/"):
        places = [root, *(root / b for b in bases), package]
    elif name.endswith(".md"):
        places = [root / "docs"]
    elif kind == "dir":
        places = [*(root / b for b in bases), package, root]
    else:
        places = [root / b / sub for b in bases] or [package]
    return any((place / name).exists() for place in places)


def missing_names(text: str, root: Path = ROOT) -> list[str]:
    """Every file, directory or module the text names that does not exist."""
    missing = []
    for dirs, para in _paragraphs(text):
        section = [d.relative_to(ROOT) for d in dirs]
        bases, sub = section, ""
        for _, kind, name in _tokens(para):
            if kind == "marker":  # one of the section's packages, or a sub-package of it
                named = [b for b in section if f"{b.name}/" == name]
                bases, sub = (named, "") if named else (section, name)
            elif not _exists(kind, name, bases, sub, root):
                missing.append(name)
    return missing


def test_every_name_in_the_doc_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert missing_names(text) == []
    assert len(_FILE.findall(text)) > 150  # the doc's names were found, so the check ran


def test_the_doc_lists_the_layers_the_test_checks() -> None:
    checked = tuple((name, tuple(units)) for name, units in LAYERS)
    assert layer_block(DOC.read_text(encoding="utf-8")) == checked


def test_a_name_that_does_not_exist_is_reported() -> None:
    text = (
        "Intro: `harness/study/store.py`, `harness/nowhere.py`, `cli/_group.py`, `*_cmds.py`,\n"
        "[b](backends.md), [x](nothing.md), `harness.judge.blinding.blind_stage.blind`,\n"
        "`harness.judge.blinding.blind_stage.nothing`, `models.base.ModelAPI`, `models.none`.\n"
        "\n"
        "### harness/judge/\n"
        "\n"
        "`judge_defaults.py`, `blind_stage.py`:\n"
        "\n"
        "- `blinding/`: `blind_stage.py`, `roster.py`, `leak_audit.py`;\n"
        "- `routing/`: `roster.py`;\n"
        "\n"
        "### harness/export/, harness/explore/\n"
        "\n"
        "`export/`: `tables.py`, `page.py`. `explore/`: `page.py`, `packets/`, `report/`.\n"
    )
    assert missing_names(text) == [
        "harness/nowhere.py",
        "nothing.md",
        "harness.judge.blinding.blind_stage.nothing",
        "models.none",
        "blind_stage.py",  # not in harness/judge/ itself
        "roster.py",  # in routing/, not blinding/
        "page.py",  # in explore/, not export/
        "packets/",
        "report/",
    ]


def test_the_layer_block_is_read_line_by_line() -> None:
    text = "x\n```layers\ntop: a b\nlow: c\n```\n"
    assert layer_block(text) == (("top", ("a", "b")), ("low", ("c",)))
