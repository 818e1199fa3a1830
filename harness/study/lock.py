"""One writer per study: an exclusive lock that every command that writes takes.

The lock is an operating-system lock on `<study>/.study.lock` (via `filelock`), so a crashed
holder releases it by dying; `<study>/.study.lock.json` names the holder (pid, host, command,
start) for the message a second writer gets. Readers (`status`, `export`, `judge --status`,
`verify`) take no lock: the store's WAL mode lets them read while a writer works. `verify
--rebuild-manifest` writes, so it takes the lock, without the manifest check (`check=False`) that
would refuse the very manifest it replaces. The lock is re-entrant within a process, so a stage
that calls another (`harness run`) holds it once.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock, Timeout

from harness.errors import HarnessError
from harness.study.clock import utc_now
from harness.study.files import HOLDER_NAME as HOLDER_NAME
from harness.study.files import LOCK_NAME
from harness.study.history import check_history
from harness.study.running import running_command

F = TypeVar("F", bound=Callable[..., Any])

_held: dict[Path, int] = {}  # study folder -> depth, for this process
_guard = threading.Lock()


def _holder(folder: Path) -> str:
    try:
        info = json.loads((folder / HOLDER_NAME).read_text(encoding="utf-8"))
        return (
            f"pid {info['pid']} on {info['host']} ({info['command']}, since {info['started_at']})"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


@contextmanager
def study_lock(
    study_dir: str | Path, command: str | None = None, *, create: bool = False, check: bool = True
) -> Iterator[None]:
    """Hold the study's writer lock; a second writer is refused at once, naming the holder.

    Without `create`, a folder that does not exist is not made: the stage itself then says that
    there is no study there. With `check`, a damaged or missing manifest stops the stage before
    it writes anything.
    """
    folder = Path(study_dir).resolve()
    if not create and not folder.is_dir():
        yield
        return
    with _guard:
        depth = _held.get(folder, 0)
        _held[folder] = depth + 1
    if depth:
        try:
            yield
        finally:
            with _guard:
                _held[folder] -= 1
        return
    lock = FileLock(str(folder / LOCK_NAME), timeout=0)
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            lock.acquire()
        except Timeout:
            raise HarnessError(
                f"the study is being written by {_holder(folder)}; wait for it "
                "to finish (read-only commands such as `harness status` work "
                "meanwhile)",
                file=folder,
            ) from None
        except OSError as error:
            raise HarnessError(
                f"cannot lock the study folder ({error.strerror}); is it writable?", file=folder
            ) from None
        _write_holder(folder, command)
        try:
            if check:
                check_history(folder, mark=True)
            yield
        finally:
            (folder / HOLDER_NAME).unlink(missing_ok=True)
            lock.release()
    finally:
        with _guard:
            _held.pop(folder, None)
        if made:
            _remove_if_unused(folder)


def _remove_if_unused(folder: Path) -> None:
    """A folder made for a stage that stored nothing (bad input) is removed again."""
    with contextlib.suppress(OSError):
        if {p.name for p in folder.iterdir()} <= {LOCK_NAME}:
            (folder / LOCK_NAME).unlink(missing_ok=True)
            folder.rmdir()


def _write_holder(folder: Path, command: str | None) -> None:
    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": command or " ".join(["harness", *sys.argv[1:2]]),
        "started_at": utc_now(),
    }
    with contextlib.suppress(OSError):  # the lock holds without it; the holder's name is a courtesy
        (folder / HOLDER_NAME).write_text(json.dumps(info), encoding="utf-8")


def writes_study(function: F) -> F:
    """Decorate a stage function whose first argument is the study (folder or `Study`)."""
    return _locking(function, create=False)


def creates_study(function: F) -> F:
    """Like `writes_study`, for stages that make the study folder when it does not exist."""
    return _locking(function, create=True)


def _locking(function: F, *, create: bool) -> F:
    @functools.wraps(function)
    def locked(study: Any, *args: Any, **kwargs: Any) -> Any:
        folder = getattr(study, "path", study)
        # the command a user typed; from Python, the function called (never an inner name)
        command = running_command() or f"harness.{function.__name__}() in Python"
        with study_lock(folder, command, create=create):
            return function(study, *args, **kwargs)

    return locked  # type: ignore[return-value]
