"""Progress of long steps, the one helper every command uses.

On a terminal (stderr) it draws a rich bar per task; otherwise (a log file, a pipe) it writes a
plain line per task when the task starts, at least every 10 s while it runs and when it ends, so
that a log never goes silent for long. Nothing goes to stdout, which keeps results only.

    with tracker() as bars:                 # one display; tasks come and go inside it
        bars.update("extract", done, total)  # also usable as a (step, done, total) callback
    with status("loading SmolLM2-135M-Instruct"):   # a step without a count
        ...

`status` joins the display already open (a model loaded inside a collect bar adds a row), and
outside one shows only where the command line turned progress on (`enable`), so library callers
stay quiet unless they ask. `HARNESS_PROGRESS_EVERY` sets the plain lines' interval in seconds.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn

EVERY = 10.0
#: A step shorter than this writes no plain lines at all (a cached model loads in a blink).
QUIET_FOR = 2.0
EVERY_ENV = "HARNESS_PROGRESS_EVERY"


class _State(TypedDict):
    enabled: bool  # `status` steps shown outside an open display
    active: Tracker | None  # the open display


_state: _State = {"enabled": False, "active": None}


def enable(on: bool = True) -> None:
    """Show `status` steps outside an open display too (the command line turns this on)."""
    _state["enabled"] = on


def _every() -> float:
    try:
        return max(0.05, float(os.environ.get(EVERY_ENV, EVERY)))
    except ValueError:
        return EVERY


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@dataclass
class _Task:
    label: str
    total: int | None
    done: int = 0
    info: str = ""
    started: float = field(default_factory=time.monotonic)
    first_done: int = 0
    rich_id: Any = None
    printed: float | None = None  # when its last plain line was written

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        if self.total is None:
            text = f"{self.label} ... {_duration(elapsed)}"
        else:
            pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
            text = f"{self.label}: {self.done}/{self.total}{pct}"
            rate = (self.done - self.first_done) / elapsed if elapsed > 0 else 0.0
            if rate > 0:
                text += f", {rate:.2f}/s"
                if self.done < self.total:
                    text += f", about {_duration((self.total - self.done) / rate)} left"
            text += f", {_duration(elapsed)} so far"
        return f"{text}  {self.info}".rstrip()


class Tracker:
    """Tasks shown together: rich bars on a terminal, timed plain lines otherwise."""

    def __init__(self, *, transient: bool = True, plain: bool | None = None) -> None:
        from rich.console import Console

        self._console = Console(stderr=True)
        self.plain = not self._console.is_terminal if plain is None else plain
        self._tasks: dict[str, _Task] = {}
        self._finished: dict[str, tuple[int, int | None]] = {}  # plain: label -> its last count
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._bar: Any = None
        self._thread: threading.Thread | None = None
        self._transient = transient

    # -- display ----------------------------------------------------------------------------
    def start(self) -> Tracker:
        if self.plain:
            self._thread = threading.Thread(target=self._tick, daemon=True, name="progress")
            self._thread.start()
        else:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            # on a narrow terminal the label and the info give way first (cut with "..."),
            # so the count and the ETA stay whole
            self._bar = Progress(
                SpinnerColumn(),
                _shrinking("{task.description}", min_width=8),
                BarColumn(bar_width=16),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                _shrinking("{task.fields[info]}"),
                console=self._console,
                transient=self._transient,
                refresh_per_second=4,
            )
            self._bar.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.stop()
        with self._lock:
            for name in list(self._tasks):
                self._finish(name)

    def _tick(self) -> None:
        every = _every()
        while not self._stop.wait(min(every, QUIET_FOR) / 4):
            now = time.monotonic()
            with self._lock:
                due = [
                    task
                    for task in self._tasks.values()
                    if (task.printed is None and now - task.started >= min(every, QUIET_FOR))
                    or (task.printed is not None and now - task.printed >= every)
                ]
                for task in due:
                    task.printed = now
                    self._write(task.line())

    def _write(self, line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    # -- tasks ------------------------------------------------------------------------------
    def update(self, label: str, done: int = 0, total: int | None = None, info: str = "") -> None:
        """Set a task's count (created on first use); the (step, done, total) callback form."""
        with self._lock:
            task = self._tasks.get(label)
            if task is None and self._finished.get(label) == (done, total):
                return  # a finished count told again: its last line stands
            if task is None:
                self._finished.pop(label, None)
                task = self._tasks[label] = _Task(label, total, done, info, first_done=done)
                if not self.plain:
                    task.rich_id = self._bar.add_task(
                        label, total=total, completed=done, info=info, rate=""
                    )
                return
            task.done, task.info = done, info or task.info
            if total is not None:
                task.total = total
            if self.plain and task.total is not None and done >= task.total:
                self._finished[label] = (done, total)
                self._finish(label)  # its last line now, not a repeat every 10 s
                return
            if self._bar is not None:
                speed = self._bar.tasks[_index(self._bar, task.rich_id)].speed
                self._bar.update(
                    task.rich_id,
                    completed=done,
                    total=task.total,
                    info=task.info,
                    rate=f"{speed:.1f}/s" if speed else "",
                )

    __call__ = update

    def finish(self, label: str) -> None:
        """End a task: its last plain line, or its row taken off a terminal display."""
        with self._lock:
            self._finish(label)

    def _finish(self, label: str) -> None:
        task = self._tasks.pop(label, None)
        if task is None:
            return
        if self.plain and task.printed is not None:  # a quick step leaves no lines
            if task.total is None:
                self._write(f"{label}: done in {_duration(time.monotonic() - task.started)}")
            else:
                self._write(task.line().replace(" so far", ""))
        elif self._bar is not None and task.total is None:
            self._bar.remove_task(task.rich_id)


def _shrinking(text_format: str, min_width: int | None = None) -> ProgressColumn:
    """A text column that a row too wide for the terminal shortens first: its table column may
    give up width (rich narrows wrappable columns before the others), and its text is cut with
    an ellipsis instead of wrapping onto a second line."""
    from rich.progress import Task, TextColumn
    from rich.table import Column
    from rich.text import Text

    class Shrinking(TextColumn):
        def render(self, task: Task) -> Text:
            text = super().render(task)
            text.no_wrap, text.overflow = True, "ellipsis"
            return text

    return Shrinking(text_format, table_column=Column(min_width=min_width))


def _index(bar: Progress, task_id: object) -> int:
    return next(i for i, t in enumerate(bar.tasks) if t.id == task_id)


@contextmanager
def tracker(*, transient: bool = True, plain: bool | None = None) -> Iterator[Tracker]:
    """One progress display for the block; `status` steps inside it join it."""
    outer = _state["active"]
    if outer is not None:  # one live display at a time: nested trackers share it
        yield outer
        return
    bars = Tracker(transient=transient, plain=plain).start()
    _state["active"] = bars
    try:
        yield bars
    finally:
        _state["active"] = None
        bars.stop()


@contextmanager
def status(message: str) -> Iterator[None]:
    """A step without a count ("loading MODEL"): a spinner row, or timed plain lines."""
    active = _state["active"]
    if active is None and not _state["enabled"]:
        yield
        return
    with tracker() as bars:
        bars.update(message)
        try:
            yield
        finally:
            bars.finish(message)


@contextmanager
def counted(label: str, total: int, *, shown: bool = True) -> Iterator[Callable[[int], None]]:
    """A counted step inside library code: `advance(done)` moves it on. Shown like `status`
    (in the open display, else only where the command line turned progress on)."""
    active = _state["active"]
    if not shown or (active is None and not _state["enabled"]):
        yield lambda done: None
        return
    with tracker() as bars:
        bars.update(label, 0, total)
        try:
            yield lambda done: bars.update(label, done, total)
        finally:
            bars.finish(label)
