"""Many model calls, a few at a time: the loop SciArena-Eval judges, labellers and attribution share.

Every call may cost money, so the loop is careful with what it has paid for: at most
``concurrency`` calls are in flight (submitted lazily, so a stop leaves nothing queued); after
``max_consecutive_errors`` failures in a row (a revoked key, an outage) no new call starts and
the rest is left for a resumed run; on Ctrl-C no new call starts, the calls in flight are
waited for and their results still reach ``on_result``, then KeyboardInterrupt is raised again
(a second Ctrl-C abandons them).
"""

from __future__ import annotations

import logging
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable, Iterable, TypeVar

from sciarena.core.errors import SciArenaError

log = logging.getLogger(__name__)

I = TypeVar("I")  # noqa: E741 - an item to call the model on
R = TypeVar("R")  # what one call returns


def run_calls(items: Iterable[I], call: Callable[[I], R], on_result: Callable[[I, R | None, str], None], *,
              concurrency: int, max_consecutive_errors: int = 20,
              failure: Callable[[R], str] = lambda result: "",
              on_interrupt: Callable[[int], None] = lambda in_flight: None,
              name: str = "sciarena-calls", unit: str = "calls") -> str:
    """Call ``call(item)`` for each item; ``on_result(item, result, error)`` sees each as it returns.

    A call that raises gives ``result=None`` and a short ``error`` (SciArenaError's message, or
    "unexpected <type>" for a bug, whose trace goes to the debug log only); ``failure(result)``
    says whether a returned result is a failure too (its error text, "" when fine). Returns why
    the run stopped early ("" when every item was called)."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    todo = iter(items)
    in_flight: dict[Future[R], I] = {}
    errors_in_row, stopped = 0, ""

    def finish(future: Future[R], item: I) -> None:
        nonlocal errors_in_row, stopped
        result: R | None = None
        try:
            result = future.result()
            error = failure(result)
        except SciArenaError as err:
            error = str(err) or type(err).__name__
        except Exception as err:  # a bug costs one call, not the whole paid run
            log.debug("%s: a call failed", name, exc_info=True)
            error = f"unexpected {type(err).__name__}"
        errors_in_row = errors_in_row + 1 if error else 0
        if errors_in_row >= max_consecutive_errors and not stopped:
            stopped = f"stopped after {errors_in_row} failed {unit} in a row (last: {error})"
        on_result(item, result, error)

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=name)
    try:
        while True:
            while not stopped and len(in_flight) < concurrency:
                item = next(todo, None)
                if item is None:
                    break
                in_flight[pool.submit(call, item)] = item
            if not in_flight:
                return stopped
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                finish(future, in_flight.pop(future))
    except KeyboardInterrupt:
        running = {future: item for future, item in in_flight.items() if not future.cancel()}
        on_interrupt(len(running))
        for future, item in running.items():
            wait([future])
            finish(future, item)
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
