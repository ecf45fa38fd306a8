"""A model call off the event loop: its result, its error, and a cancel that does not wait."""

from __future__ import annotations

import threading

import anyio
import pytest

from memserver.clients.threads import run_abandonable

WAIT = 60.0  # seconds: the bound of every wait below


def test_the_result_and_the_error_of_the_call_come_back() -> None:
    async def body() -> None:
        assert await run_abandonable(lambda: 6 * 7) == 42

        def fails() -> int:
            raise ValueError("the model answered badly")

        with pytest.raises(ValueError, match="answered badly"):
            await run_abandonable(fails)

    anyio.run(body)


def test_a_cancelled_wait_returns_at_once_and_leaves_the_call_in_a_daemon_thread() -> None:
    """A Ctrl-C during a slow model's answer stops the run now, not when it answers."""
    started, release, finished = threading.Event(), threading.Event(), threading.Event()
    seen: list[threading.Thread] = []

    def slow() -> str:
        seen.append(threading.current_thread())
        started.set()
        release.wait(WAIT)  # the model still thinking
        finished.set()
        return "late"

    async def body() -> bool:
        with anyio.move_on_after(WAIT) as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(run_abandonable, slow)
                await anyio.to_thread.run_sync(started.wait, WAIT)
                group.cancel_scope.cancel()  # what the signal handler does
        return scope.cancelled_caught

    assert anyio.run(body) is False  # cancelled by the group, not by the bound
    assert not finished.is_set()  # returned while the call was still running
    assert seen[0].daemon  # so the process may exit before it ends
    release.set()
    assert finished.wait(WAIT)
