"""A blocking client call (a model's answer) off the event loop, left behind on cancel.

``anyio.to_thread.run_sync`` waits for its thread even when the waiting task is
cancelled, and its worker threads are joined when the process exits: a Ctrl-C during a
slow local model's answer held ``ingest-agent`` for up to ``llm.timeout`` (120 s by
default). ``run_abandonable`` runs the call in a daemon thread instead: a cancelled
wait returns at once, the call ends on its own deadline with its result unused, and the
process can exit meanwhile. Only for calls whose result is all they do (a model's
answer); anything that writes stays on ``to_thread.run_sync``.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

T = TypeVar("T")


async def run_abandonable(call: Callable[[], T], name: str = "model call") -> T:
    """``call()`` in a daemon thread (with the caller's context variables); its result
    or its exception."""
    done = anyio.Event()
    token = anyio.lowlevel.current_token()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the waiting task
            failure.append(exc)
        with contextlib.suppress(RuntimeError):  # the event loop is gone: nobody waits
            anyio.from_thread.run_sync(done.set, token=token)

    context = contextvars.copy_context()  # as to_thread.run_sync does
    threading.Thread(target=context.run, args=(work,), name=name, daemon=True).start()
    await done.wait()
    if failure:
        raise failure[0]
    return outcome[0]
