"""The one loader for YAML files whose errors name the file, the line and the field: the study
file, the analysis plan and the controls file read through it.

`read_yaml_file` parses a file once, keeping the line of every key path (dates stay as the text
written, to be validated where they are used), and the `YamlFile` it returns validates a part of
it against a pydantic model, turning the first error into one `HarnessError` with its line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from harness.errors import HarnessError
from harness.materials._yaml import line_of, parse_with_lines, pydantic_message

__all__ = ["YamlFile", "read_yaml_file", "read_yaml_mapping", "spelling_message"]

Model = TypeVar("Model", bound=BaseModel)
#: One line for a pydantic error (the first of a failed validation).
Message = Callable[[ErrorDetails], str]


@dataclass(frozen=True)
class YamlFile:
    """A parsed YAML file: its bytes, its data and the 1-based line of every key path (list
    indices as text: `("models", "0", "label")`)."""

    path: Path
    raw: bytes
    data: object
    lines: Mapping[tuple[str, ...], int]

    @property
    def text(self) -> str:
        return self.raw.decode("utf-8", errors="replace")

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    def line(self, *loc: str) -> int | None:
        """The line of the deepest part of `loc` present in the file."""
        return line_of(dict(self.lines), loc)

    def validate(
        self,
        model: type[Model],
        message: Message,
        *,
        data: object = None,
        at: tuple[str, ...] = (),
        column: str | None = None,
    ) -> Model:
        """`data` (default: the whole file), found at the key path `at`, as `model`; the first
        error names the line of its field and the column `column.field` (or just the field)."""
        try:
            return model.model_validate(self.data if data is None else data)
        except ValidationError as error:
            first = error.errors()[0]
            loc = tuple(str(part) for part in first["loc"])
            raise HarnessError(
                message(first),
                file=self.path,
                row=self.line(*at, *loc),
                column=".".join((column, *loc) if column else loc) or None,
            ) from None


def read_yaml_file(path: str | Path, what: str) -> YamlFile:
    """Read and parse `path`; `what` names the file in errors ("cannot read the study file")."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as error:
        raise HarnessError(f"cannot read the {what} ({error.strerror})", file=file) from None
    data, lines = parse_with_lines(raw.decode("utf-8", errors="replace"), file)
    return YamlFile(file, raw, data, lines)


def read_yaml_mapping(path: str | Path, what: str) -> YamlFile:
    """As `read_yaml_file`, for a file whose top level must be a mapping."""
    loaded = read_yaml_file(path, what)
    if not isinstance(loaded.data, dict):
        raise HarnessError(f"the {what} must be a YAML mapping", file=loaded.path, row=1)
    return loaded


def spelling_message(reference: str) -> Message:
    """Pydantic's messages on one line, an unknown field pointing at `reference`."""
    return lambda error: pydantic_message(error, reference)
