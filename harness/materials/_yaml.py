"""YAML loading that keeps line numbers, so errors can name the line of a bad entry."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

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


def first_error(error: ValidationError) -> tuple[str, str]:
    """(dotted field path, message) of the first error of a pydantic ValidationError."""
    detail = error.errors()[0]
    loc = ".".join(str(part) for part in detail["loc"])
    return loc, plain_message(detail)


#: What pydantic puts before a validator's own message ("Value error, the date ...").
_PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")


def plain_message(detail: Mapping[str, object]) -> str:
    """A pydantic error's message on one line, without pydantic's "Value error, " prefix."""
    msg = str(detail["msg"]).replace("\n", " ")
    for prefix in _PYDANTIC_PREFIXES:
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg


def pydantic_message(error: Mapping[str, object], reference: str) -> str:
    """One line for a pydantic error; `reference` names the file to check spellings against."""
    if error["type"] == "extra_forbidden":
        return f"unknown field (check the spelling against {reference})"
    if error["type"] == "missing":
        return "required field is missing"
    return plain_message(error)


class _NoDates(yaml.SafeLoader):
    """Safe loading that keeps dates as the text written: a date is validated where it is used,
    with the field named (an impossible date would otherwise fail inside the YAML parser)."""


_NoDates.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_with_lines(text: str, file: Path) -> tuple[object, dict[tuple[str, ...], int]]:
    """Parsed YAML (dates kept as text) and the 1-based line of every key path."""
    try:
        node = yaml.compose(text, Loader=_NoDates)
        data = yaml.load(text, Loader=_NoDates)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise HarnessError(
            f"invalid YAML: {problem}", file=file, row=mark.line + 1 if mark else None
        ) from None
    lines: dict[tuple[str, ...], int] = {}
    if node is not None:
        _index_lines(node, (), lines)
    return data, lines


def _index_lines(node: yaml.Node, path: tuple[str, ...], out: dict[tuple[str, ...], int]) -> None:
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            child = (*path, str(key.value))
            out[child] = key.start_mark.line + 1
            _index_lines(value, child, out)
            out[child] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, value in enumerate(node.value):
            _index_lines(value, (*path, str(index)), out)


def line_of(lines: dict[tuple[str, ...], int], loc: tuple[str, ...]) -> int | None:
    """Line of the deepest part of `loc` present in the file (a missing key: its parent's)."""
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None
