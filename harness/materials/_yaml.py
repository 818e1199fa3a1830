"""YAML loading that keeps line numbers, so errors can name the line of a bad entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.errors import HarnessError


def load_yaml(path: Path) -> Any:
    """Parse a YAML file; syntax errors become a one-line HarnessError with the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise HarnessError(f"cannot read file ({error.strerror})", file=path) from None
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        line = mark.line + 1 if mark is not None else None
        raise HarnessError(f"malformed YAML: {error.problem}", file=path, row=line) from None
    except yaml.YAMLError as error:
        raise HarnessError(f"malformed YAML: {error}", file=path) from None


def item_lines(path: Path, list_key: str) -> list[int]:
    """1-based line of each entry of the top-level list `list_key` (empty if not a mapping)."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    for key, value in root.value:
        if getattr(key, "value", None) == list_key and isinstance(value, yaml.SequenceNode):
            return [node.start_mark.line + 1 for node in value.value]
    return []


def first_error(error: Any) -> tuple[str, str]:
    """(dotted field path, message) of the first error of a pydantic ValidationError."""
    detail = error.errors()[0]
    loc = ".".join(str(part) for part in detail["loc"])
    return loc, detail["msg"]
