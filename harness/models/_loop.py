"""A private asyncio loop on a daemon thread, so synchronous callers can stream async work.

Remote backends are asynchronous (many requests in flight) while `Backend.complete` is a plain
iterator; the loop runs the requests and hands each completion over a thread-safe queue the moment
it is ready. Closing the iterator early (budget reached, Ctrl-C) cancels the work still running.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar, cast

T = TypeVar("T")

_DONE = object()


class LoopThread:
    """One event loop on one daemon thread, started on first use."""

    def __init__(self, name: str = "harness-backend") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Awaitable[T], timeout: float | None = None) -> T:
        """Run one coroutine to completion and return its result."""
        return asyncio.run_coroutine_threadsafe(_wrap(coro), self.loop).result(timeout)

    def stream(self, produce: Callable[[Callable[[T], None]], Awaitable[None]]) -> Iterator[T]:
        """Yield what `produce(emit)` emits, in order, while it runs on the loop."""
        # what `produce` emits, then `_DONE` or the error it raised
        items: queue.SimpleQueue[object] = queue.SimpleQueue()
        finished = threading.Event()

        async def runner() -> None:
            try:
                await produce(items.put)
                items.put(_DONE)
            except asyncio.CancelledError:
                items.put(_DONE)
                raise
            except BaseException as error:  # handed to the consumer, raised there
                items.put(error)
            finally:
                finished.set()

        future = asyncio.run_coroutine_threadsafe(runner(), self.loop)
        try:
            while True:
                try:
                    item = items.get(timeout=0.25)  # short waits keep Ctrl-C responsive
                except queue.Empty:
                    continue
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield cast(T, item)
        finally:
            if not finished.is_set():
                future.cancel()
                finished.wait(timeout=10)

    def close(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            if not thread.is_alive():
                loop.close()


async def _wrap(coro: Awaitable[T]) -> T:
    return await coro
