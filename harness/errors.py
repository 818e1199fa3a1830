"""The one error type users see: a message with the place it refers to."""

from __future__ import annotations

from pathlib import Path


class HarnessError(Exception):
    """A user-facing error (bad file, bad flag, missing key).

    The CLI prints it as one line, ``file:row: column: message``, and exits with code 2.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        row: int | str | None = None,
        column: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = str(file) if file is not None else None
        self.row = row
        self.column = column

    def __str__(self) -> str:
        place = ""
        if self.file:
            place = self.file
            if self.row is not None:
                place += f":{self.row}"
            place += ": "
        elif self.row is not None:
            place = f"row {self.row}: "
        if self.column:
            place += f"{self.column}: "
        return f"{place}{self.message}".replace("\n", " ")


class PartialWork(HarnessError):
    """Work was done but not all of it (failed requests, items left pending).

    What finished is kept and a rerun resumes; the CLI prints the one line and exits with 1, so
    scripts can tell partial work (1) from a usage or input error (2).
    """


class SchemaVersionError(HarnessError):
    """The study folder was written by a different schema version."""
