"""Logging: stdlib `logging` under the `harness` logger, to stderr and to the study's log file.

The CLI calls `configure` once (`--log-level`); every study opened afterwards also gets its
records appended to `<study>/logs/harness.log` (at least at info level, so the file keeps
requests, retries, waits and timings even when the terminal shows only warnings). Library use
without the CLI leaves logging to the caller, as the stdlib expects.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

LOGGER = "harness"
LEVELS = ("debug", "info", "warning", "error")
LOG_FILE = Path("logs") / "harness.log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_MARK = "_harness_handler"


class _CurrentStderr:
    """Writes to whatever `sys.stderr` is at the time (progress bars and tests replace it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(level: str = "warning") -> None:
    """Send `harness.*` records at `level` and above to stderr; replaces an earlier set-up."""
    if level.lower() not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}")
    reset()
    logger = logging.getLogger(LOGGER)
    handler = logging.StreamHandler(_CurrentStderr())
    handler.setLevel(level.upper())
    handler.setFormatter(logging.Formatter(_FORMAT))
    setattr(handler, _MARK, "stderr")
    logger.addHandler(handler)
    logger.setLevel(min(handler.level, logging.INFO))


def log_to_study(folder: str | Path) -> None:
    """Append this process's records to `<folder>/logs/harness.log` (only after `configure`)."""
    if "logging" not in sys.modules:  # `configure` imports it: no set-up to follow
        return

    logger = logging.getLogger(LOGGER)
    stderr = next((h for h in logger.handlers if getattr(h, _MARK, None) == "stderr"), None)
    if stderr is None:
        return
    path = (Path(folder) / LOG_FILE).resolve()
    if any(getattr(h, _MARK, None) == str(path) for h in logger.handlers):
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    except OSError:  # a read-only (archived) study is read without a log file
        return
    handler.setLevel(min(stderr.level, logging.INFO))
    handler.setFormatter(logging.Formatter(_FORMAT))
    setattr(handler, _MARK, str(path))
    logger.addHandler(handler)


def reset() -> None:
    """Remove the handlers `configure` and `log_to_study` added (the CLI does so when it ends)."""
    if "logging" not in sys.modules:  # `configure` imports it: nothing was added
        return

    logger = logging.getLogger(LOGGER)
    for handler in [h for h in logger.handlers if getattr(h, _MARK, False)]:
        logger.removeHandler(handler)
        handler.close()
    logger.setLevel(logging.NOTSET)
