"""Reading the failure of an HTTP integration (LLM, reranker, embeddings, laya): the
server's ``Retry-After`` and the most specific message in an exception chain."""

from __future__ import annotations

import httpx2


def retry_after(response: httpx2.Response | None) -> float | None:
    """Seconds from a ``Retry-After`` header (seconds form), if any."""
    if response is None:
        return None
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def root_message(exc: BaseException) -> str:
    """The most specific message in the exception chain (TLS errors name the integration)."""
    messages: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(messages) < 10:
        text = str(seen)
        if text and text not in messages:
            messages.append(text)
        seen = seen.__cause__ or seen.__context__
    named = [m for m in messages if "TLS certificate verification failed" in m]
    if named:
        return named[0]
    return messages[-1] if messages else type(exc).__name__
