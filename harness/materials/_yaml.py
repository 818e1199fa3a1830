"""YAML loading that keeps line numbers, so errors can name the line of a bad entry.

Files are parsed once, by libyaml where PyYAML was built with it (a topic bank parses several
times faster than in Python), and their line numbers read from the same parse. A file libyaml
rejects is parsed again in Python, whose messages errors have always quoted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml
from pydantic import ValidationError

from harness.errors import HarnessError

T = TypeVar("T")


class _Parser(Protocol):
    """A PyYAML loader: Python's or libyaml's (which PyYAML does not derive from SafeLoader)."""

    def get_single_node(self) -> yaml.Node | None: ...
    def construct_document(self, node: yaml.Node) -> Any: ...
    def dispose(self) -> None: ...


Loader = Callable[[str], _Parser]
#: libyaml's safe loader, where PyYAML has it
_FAST: Loader | None = getattr(yaml, "CSafeLoader", None)


def _parse(
    text: str, loader: Loader, fast: Loader | None, read: Callable[[yaml.Node | None], T]
) -> tuple[Any, T]:
    """(data, `read(root node)`) of one parse, by `fast` where it exists; what `fast` rejects is
    parsed again by `loader`, which raises in its own words (or accepts it). `read` sees the
    nodes before construction, which flattens merge keys (<<) in place."""
    if fast is not None:
        try:
            return _compose_and_construct(text, fast, read)
        except yaml.YAMLError:
            pass
    return _compose_and_construct(text, loader, read)


def _compose_and_construct(
    text: str, loader: Loader, read: Callable[[yaml.Node | None], T]
) -> tuple[Any, T]:
    parser = loader(text)
    try:
        node = parser.get_single_node()
        seen = read(node)
        return (parser.construct_document(node) if node is not None else None), seen
    finally:
        parser.dispose()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise HarnessError(f"cannot read file ({error.strerror})", file=path) from None


def _safe(path: Path, read: Callable[[yaml.Node | None], T]) -> tuple[Any, T]:
    """Parse a file safely; syntax errors become a one-line HarnessError with the line."""
    text = _read(path)
    try:
        return _parse(text, yaml.SafeLoader, _FAST, read)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        line = mark.line + 1 if mark is not None else None
        raise HarnessError(f"malformed YAML: {error.problem}", file=path, row=line) from None
    except yaml.YAMLError as error:
        raise HarnessError(f"malformed YAML: {error}", file=path) from None


def load_yaml(path: Path) -> Any:
    """Parse a YAML file; syntax errors become a one-line HarnessError with the line."""
    return _safe(path, lambda node: None)[0]


def load_yaml_items(path: Path, list_key: str) -> tuple[Any, list[int]]:
    """`load_yaml` and `item_lines` of one parse: the data, and the 1-based line of each entry
    of its top-level list `list_key`."""
    return _safe(path, lambda node: _item_lines(node, list_key))


def item_lines(path: Path, list_key: str) -> list[int]:
    """1-based line of each entry of the top-level list `list_key` (empty if not a mapping)."""
    try:
        text = path.read_text(encoding="utf-8")
        parser = (_FAST or yaml.SafeLoader)(text)
        try:
            root = parser.get_single_node()
        finally:
            parser.dispose()
    except (OSError, yaml.YAMLError):
        return []
    return _item_lines(root, list_key)


def _item_lines(root: yaml.Node | None, list_key: str) -> list[int]:
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


_Resolvers = dict[Any, list[tuple[str, Any]]]


def _no_dates(resolvers: _Resolvers) -> _Resolvers:
    return {
        first: [(tag, regexp) for tag, regexp in found if tag != "tag:yaml.org,2002:timestamp"]
        for first, found in resolvers.items()
    }


class _NoDates(yaml.SafeLoader):
    """Safe loading that keeps dates as the text written: a date is validated where it is used,
    with the field named (an impossible date would otherwise fail inside the YAML parser)."""


_NoDates.yaml_implicit_resolvers = _no_dates(yaml.SafeLoader.yaml_implicit_resolvers)
_FAST_NO_DATES: Loader | None = None
if hasattr(yaml, "CSafeLoader"):

    class _FastNoDates(yaml.CSafeLoader):
        """`_NoDates` on libyaml's parser."""

    _FastNoDates.yaml_implicit_resolvers = _no_dates(yaml.CSafeLoader.yaml_implicit_resolvers)
    _FAST_NO_DATES = _FastNoDates


def parse_with_lines(text: str, file: Path) -> tuple[object, dict[tuple[str, ...], int]]:
    """Parsed YAML (dates kept as text) and the 1-based line of every key path."""
    try:
        return _parse(text, _NoDates, _FAST_NO_DATES, _key_lines)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise HarnessError(
            f"invalid YAML: {problem}", file=file, row=mark.line + 1 if mark else None
        ) from None


def _key_lines(node: yaml.Node | None) -> dict[tuple[str, ...], int]:
    lines: dict[tuple[str, ...], int] = {}
    if node is not None:
        _index_lines(node, (), lines)
    return lines


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
