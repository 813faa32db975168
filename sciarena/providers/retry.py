"""The one retry policy for model calls: bounded, jittered, and never after the first delta.

A stream may be retried only while nothing has been handed to the caller:
once a delta is out, a second attempt would duplicate or contradict it, so a
failure after that point surfaces as an error instead. One-shot calls
(moderation) run through the same loop as a stream of one item. The clients'
own retries are switched off (clients.build_client), so this is the only one.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from sciarena.core.errors import ProviderError

log = logging.getLogger(__name__)
_T = TypeVar("_T")


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to retry, and how long to wait between attempts."""

    max_retries: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("retry settings must be non-negative")

    def delay(self, retry: int, retry_after_s: float | None = None,
              rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry number ``retry`` (1-based).

        Exponential backoff with "full jitter" spreads simultaneous clients apart;
        a server's Retry-After wins when it asks for longer, but is capped so a
        battle never hangs on one side's say-so.
        """
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (retry - 1))
        wait = backoff * (0.5 + 0.5 * rand())
        if retry_after_s is not None:
            wait = max(wait, min(retry_after_s, self.max_delay_s))
        return wait


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The wait a 429/503 response asks for (``retry-after-ms`` or ``retry-after`` seconds)."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            continue  # an HTTP date: not worth parsing for a bounded wait
    return None


def with_retries(
    attempt: Callable[[], Iterator[_T]],
    policy: RetryPolicy,
    *,
    is_retryable: Callable[[BaseException], bool],
    to_error: Callable[[BaseException, int], ProviderError],
    retry_after: Callable[[BaseException], float | None] = lambda err: None,
    sleep: Callable[[float], None] = time.sleep,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[_T]:
    """Yield ``attempt()``'s items, starting over on retryable failures before the first item.

    Any other failure is converted with ``to_error(err, attempts_made)``, and so is a retryable
    one whose wait would end past ``deadline`` (a ``clock()`` time): the caller learns what went
    wrong rather than that time ran out while waiting. ProviderErrors raised by ``attempt``
    itself pass through unchanged.
    """
    attempts = 0
    while True:
        attempts += 1
        started = False
        stream = attempt()
        try:
            for delta in stream:
                started = True
                yield delta
            return
        except ProviderError:
            raise
        except Exception as err:  # client exceptions of any library are classified by the caller
            if started or attempts > policy.max_retries or not is_retryable(err):
                raise to_error(err, attempts) from err
            wait = policy.delay(attempts, retry_after(err))
            if deadline is not None and clock() + wait >= deadline:
                raise to_error(err, attempts) from err
            log.info("retrying after %s (attempt %d, waiting %.2fs)", type(err).__name__, attempts, wait)
        finally:
            # Release the HTTP connection now rather than when the generator is collected.
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        sleep(wait)
