"""The sign-in rate limit: failed sign-ins counted per client address and per token prefix.

A client that keeps sending wrong tokens is refused with 429 and a ``Retry-After`` once
it has failed ``limit`` times within ``window`` seconds, for every sign-in it tries
until the oldest of those failures leaves the window, the right token included: trying
secrets at any speed learns nothing. The *token prefix* (the first characters of the
secret sent) also counts, so a guesser spread over many addresses is held back too.
Only failures count; memory is bounded (``max_keys`` per kind, the stalest dropped).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

from memserver.server.tokens import SECRET_PREFIX

PREFIX_CHARS = 8  # of the secret after ``ms_``


@dataclass(frozen=True)
class SignInLimits:
    per_address: int = 20
    per_prefix: int = 5
    window: float = 300.0
    max_keys: int = 10_000


class FailureWindow:
    """Failures per key within a sliding window (thread-safe)."""

    def __init__(
        self, limit: int, window: float, max_keys: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit, self.window, self.max_keys, self.clock = limit, window, max_keys, clock
        self._lock = threading.Lock()
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def retry_after(self, key: str) -> int | None:
        """Seconds until ``key`` may try again, or None if it may now."""
        with self._lock:
            failures = self._recent(key)
            if failures is None or len(failures) < self.limit:
                return None
            return max(1, math.ceil(failures[0] + self.window - self.clock()))

    def failed(self, key: str) -> None:
        with self._lock:
            failures = self._recent(key)
            if failures is None:
                failures = self._failures[key] = deque(maxlen=self.limit)
                while len(self._failures) > self.max_keys:
                    self._failures.popitem(last=False)
            failures.append(self.clock())
            self._failures.move_to_end(key)

    def _recent(self, key: str) -> deque[float] | None:
        failures = self._failures.get(key)
        if failures is None:
            return None
        while failures and failures[0] <= self.clock() - self.window:
            failures.popleft()
        return failures


class SignInThrottle:
    """Both windows of one console: by client address and by token prefix."""

    def __init__(self, limits: SignInLimits | None = None) -> None:
        limits = limits or SignInLimits()
        self.by_address = FailureWindow(limits.per_address, limits.window, limits.max_keys)
        self.by_prefix = FailureWindow(limits.per_prefix, limits.window, limits.max_keys)

    @staticmethod
    def prefix(secret: str) -> str:
        return secret.strip().removeprefix(SECRET_PREFIX)[:PREFIX_CHARS]

    def retry_after(self, address: str, secret: str) -> int | None:
        waits = [
            self.by_address.retry_after(address),
            self.by_prefix.retry_after(self.prefix(secret)),
        ]
        found = [w for w in waits if w is not None]
        return max(found) if found else None

    def failed(self, address: str, secret: str) -> None:
        self.by_address.failed(address)
        self.by_prefix.failed(self.prefix(secret))
