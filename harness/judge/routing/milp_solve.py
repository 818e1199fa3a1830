"""Integer programmes of the routing (HiGHS through `scipy.optimize.milp`), solved so that Ctrl-C
is answered at once.

HiGHS does not look at Python's signals while it solves (a routing may run to its time limit),
but it releases the GIL. So it runs in a worker thread while the main thread waits in short
joins, where Ctrl-C raises KeyboardInterrupt at once. The worker is a daemon thread: an
interrupted solve is abandoned. The interpreter's shutdown would still wait for HiGHS to stop
(more than a second), so the process then ends at its first exit handler, with the status of an
interrupted command (130), once the interrupt has unwound the stack (locks released, the one-line
message written). Nothing is half written: the routing stores an assignment only after its
solve returns.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scipy.optimize import OptimizeResult

#: how often the waiting main thread wakes (a signal interrupts the wait itself on POSIX)
WAKE_S = 0.1
#: the exit status of a process that abandoned a solve (an interrupted command's)
INTERRUPTED_EXIT = 130


def solve_milp(cost: Any, **kwargs: Any) -> OptimizeResult:
    """`scipy.optimize.milp(cost, **kwargs)` in a worker thread; KeyboardInterrupt reaches the
    caller while it runs."""
    from scipy.optimize import milp

    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["result"] = milp(cost, **kwargs)
        except BaseException as error:  # handed to the waiting thread, which raises it
            outcome["error"] = error

    worker = threading.Thread(target=work, name="routing-milp", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(WAKE_S)
    except BaseException:
        # abandoned: HiGHS solves on until the process ends. (Its outcome, not is_alive(): an
        # interrupted join marks the thread stopped while it runs, CPython's bpo-45274.)
        if not outcome:
            atexit.register(_exit_at_once)
        raise
    if "error" in outcome:
        raise outcome["error"]
    result: OptimizeResult = outcome["result"]
    return result


def _exit_at_once() -> None:
    """End the process now rather than wait in the interpreter's shutdown for an abandoned
    solve: logs and output flushed first."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(INTERRUPTED_EXIT)
