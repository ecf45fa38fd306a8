"""Per-run token accounting: what a run has spent on the LLM, and its limit.

One ``TokenBudget`` is shared by every LLM client of a run (thread-safe). The client
checks it before each call with an estimate of the prompt (characters / 4), so a run
stops *before* a call that would overspend, and charges the provider's reported usage
after (estimated when a provider omits it). Lesson from peers: an LLM job once cost 50x
its estimate; a hard per-run limit turns that into a clean stop with a message.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from memserver.errors import BudgetExceeded, ConfigError


class TokenBudget:
    """Tokens spent by one run, and the limit it must stay under (None = unlimited).

    Thread-safe; share one instance between every client of a run.
    """

    def __init__(self, max_tokens: int | None) -> None:
        if max_tokens is not None and max_tokens <= 0:
            raise ConfigError(f"budget.max_tokens must be positive, not {max_tokens}")
        self.max_tokens = max_tokens
        self.used = 0
        self.calls = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int | None:
        return None if self.max_tokens is None else max(0, self.max_tokens - self.used)

    def check(self, estimate: int = 0) -> None:
        """Raise BudgetExceeded if a call costing about ``estimate`` tokens would overspend."""
        with self._lock:
            if self.max_tokens is not None and self.used + estimate > self.max_tokens:
                raise self._exceeded(estimate)

    def charge(self, usage: Mapping[str, int] | Any, *, strict: bool = True) -> None:
        """Add a call's usage (a mapping or an openai usage object).

        With ``strict`` (the default) raise BudgetExceeded once the budget is overspent;
        the LLM client passes ``strict=False`` so the answer already paid for is used
        and the *next* call stops.
        """
        tokens = usage_tokens(usage)
        with self._lock:
            self.used += tokens
            self.calls += 1
            if strict and self.max_tokens is not None and self.used > self.max_tokens:
                raise self._exceeded(0)

    def _exceeded(self, estimate: int) -> BudgetExceeded:
        extra = f" (the next call needs about {estimate})" if estimate else ""
        return BudgetExceeded(
            f"token budget spent: {self.used} of {self.max_tokens} tokens used in "
            f"{self.calls} calls this run{extra}; stopping before spending more",
            "raise budget.max_tokens in config.yaml (or MEMORY_BUDGET_TOKENS) and run "
            "again; finished work is kept",
        )


def usage_tokens(usage: Mapping[str, int] | Any) -> int:
    """Total tokens of a usage record (``total_tokens``, else prompt + completion)."""
    if usage is None:
        return 0
    get: Callable[[str], Any] = (
        usage.get if isinstance(usage, Mapping) else (lambda key: getattr(usage, key, None))
    )
    total = get("total_tokens")
    if isinstance(total, int) and total > 0:
        return total
    return int(get("prompt_tokens") or 0) + int(get("completion_tokens") or 0)


def estimate_tokens(value: Any) -> int:
    """A rough token count (characters / 4) of messages or text, for budget checks."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return len(text) // 4 + 1
