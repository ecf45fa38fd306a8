"""The sign-in rate limit: failed sign-ins counted per client and per token prefix.

A client that keeps sending wrong tokens is refused with 429 and a ``Retry-After`` once
it has failed ``limit`` times within ``window`` seconds, for every sign-in it tries
until the oldest of those failures leaves the window, the right token included: trying
secrets at any speed learns nothing. The *token prefix* (the first characters of the
secret sent) also counts, so a guesser spread over many addresses is held back too.
Only failures count; memory is bounded (``max_keys`` per kind, the stalest dropped).

Every local process shares one address (loopback), and a token's first characters may
be known, so those two windows alone would let any one client lock every user, or one
token, out. A browser that signed in with a token before is therefore a client of its
own: it holds a *device cookie* (a random id and an HMAC over it and the token's hash,
``device_cookie``), and a sign-in with that same token from that browser is counted
only against that browser's own window (``per_device``), never against the address's or
the prefix's. The cookie proves nothing for any other token, so a guesser gains no
attempts by holding one (the scheme OWASP calls device cookies).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
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
    per_device: int = 5
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
    """The windows of one console: by client address, by token prefix, and by device
    (a browser that signed in with the token before; see the module docstring)."""

    def __init__(self, limits: SignInLimits | None = None, key: bytes | None = None) -> None:
        limits = limits or SignInLimits()
        self.by_address = FailureWindow(limits.per_address, limits.window, limits.max_keys)
        self.by_prefix = FailureWindow(limits.per_prefix, limits.window, limits.max_keys)
        self.by_device = FailureWindow(limits.per_device, limits.window, limits.max_keys)
        self._key = key or secrets.token_bytes(32)  # a restart forgets the devices

    @staticmethod
    def prefix(secret: str) -> str:
        return secret.strip().removeprefix(SECRET_PREFIX)[:PREFIX_CHARS]

    def device_cookie(self, secret: str) -> str:
        """The cookie a browser gets once it has signed in with ``secret``."""
        device = secrets.token_urlsafe(16)
        return f"{device}.{self._mac(device, secret)}"

    def device(self, cookie: str | None, secret: str) -> str | None:
        """The device id of ``cookie`` when it was given for ``secret``, else None."""
        device, _, mac = (cookie or "").partition(".")
        if not device or not mac or not hmac.compare_digest(mac, self._mac(device, secret)):
            return None
        return device

    def _mac(self, device: str, secret: str) -> str:
        token = hashlib.sha256(secret.strip().encode("utf-8", "surrogateescape")).digest()
        return hmac.new(self._key, device.encode() + b"\0" + token, "sha256").hexdigest()

    def retry_after(self, address: str, secret: str, device: str | None = None) -> int | None:
        if device is not None:  # this browser signed in with this token before
            return self.by_device.retry_after(device)
        waits = [
            self.by_address.retry_after(address),
            self.by_prefix.retry_after(self.prefix(secret)),
        ]
        found = [w for w in waits if w is not None]
        return max(found) if found else None

    def failed(self, address: str, secret: str, device: str | None = None) -> None:
        if device is not None:
            self.by_device.failed(device)
            return
        self.by_address.failed(address)
        self.by_prefix.failed(self.prefix(secret))
