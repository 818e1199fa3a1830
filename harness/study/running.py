"""The command this process runs (`harness collect`), named by the CLI once its options are
parsed: a study's lock names its holder by it. Kept apart from the lock, which reads the
manifest, so that the CLI can name the command before it loads any of that."""

from __future__ import annotations

__all__ = ["running_command", "set_command"]

_command: list[str] = []


def set_command(command: str) -> None:
    """Name the running command in the locks this process takes (the CLI calls it)."""
    _command[:] = [command]


def running_command() -> str | None:
    """The command the CLI named, or None when the study is driven from Python."""
    return _command[0] if _command else None
