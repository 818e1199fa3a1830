"""Prompt template families: Jinja2 with StrictUndefined, rendered with character spans of slots."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.defaults import materials_dir
from harness.errors import HarnessError

SLOTS = ("concept_1", "field_1", "concept_2", "field_2")
VARIABLES = (*SLOTS, "relation")
# Private-use code points mark slot boundaries during rendering; they never occur in real text.
_OPEN, _MID, _CLOSE = "\ue000", "\ue001", "\ue002"

if TYPE_CHECKING:  # jinja2 loads when templates do, not with `import harness`
    import jinja2


@dataclass(frozen=True)
class Slot:
    name: str
    value: str


@dataclass(frozen=True)
class Family:
    name: str
    path: Path
    source: str
    template: jinja2.Template

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Rendered:
    text: str
    spans: dict[str, tuple[int, int]]


def _finalize(value: object) -> object:
    if isinstance(value, Slot):
        return f"{_OPEN}{value.name}{_MID}{value.value}{_CLOSE}"
    return value


def _environment(folder: Path) -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        keep_trailing_newline=False,
        autoescape=False,
    )


def load_families(folder: Path | None = None) -> list[Family]:
    """Every `*.j2` in the folder is one paraphrase family, sorted by name."""
    import jinja2

    folder = folder or materials_dir("prompts") / "generate"
    if not folder.is_dir():
        raise HarnessError("prompt template folder not found", file=folder)
    env = _environment(folder)
    families = []
    for path in sorted(folder.glob("*.j2")):
        source = path.read_text(encoding="utf-8")
        try:
            template = env.from_string(source)
        except jinja2.TemplateSyntaxError as error:
            raise HarnessError(
                f"template syntax: {error.message}", file=path, row=error.lineno
            ) from None
        families.append(Family(path.stem, path, source, template))
    if not families:
        raise HarnessError("no prompt templates (*.j2)", file=folder)
    return families


def system_message(folder: Path | None = None) -> str | None:
    path = (folder or materials_dir("prompts") / "generate") / "system.txt"
    return path.read_text(encoding="utf-8").strip() if path.exists() else None


def render(family: Family, values: dict[str, str]) -> Rendered:
    """Render a family with slot values; return the text and each slot's character span."""
    import jinja2

    context = {k: Slot(k, v) if k in SLOTS else v for k, v in values.items()}
    try:
        marked = family.template.render(**context).strip()
    except jinja2.UndefinedError as error:
        raise HarnessError(
            f"template uses an undefined variable: {error.message}", file=family.path
        ) from None
    except jinja2.TemplateError as error:
        raise HarnessError(f"template error: {error}", file=family.path) from None
    return _strip_markers(marked, family.path)


def _strip_markers(marked: str, path: Path) -> Rendered:
    out: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    pos = i = 0
    while i < len(marked):
        if marked[i] != _OPEN:
            out.append(marked[i])
            pos += 1
            i += 1
            continue
        mid = marked.index(_MID, i)
        end = marked.index(_CLOSE, mid)
        name, value = marked[i + 1 : mid], marked[mid + 1 : end]
        if name in spans:
            raise HarnessError(f"slot {name!r} is used more than once", file=path)
        spans[name] = (pos, pos + len(value))
        out.append(value)
        pos += len(value)
        i = end + 1
    missing = [s for s in SLOTS if s not in spans]
    if missing:
        raise HarnessError(f"template does not use slot(s) {', '.join(missing)}", file=path)
    return Rendered("".join(out), spans)
