"""Audit rows of concurrent tool calls written together (group commit).

Every MCP call appends its audit row before its result goes back, as before; but instead
of one transaction (and a worker thread) per call, a call hands its row to one writer
thread and waits for it. The writer takes every row waiting at that moment and writes
them in one batch (``AuditLog.append_many``: one round trip), so under load many calls
share a transaction, and alone a call costs what it did. Measured in
``bench/bench_mcp_overhead.py``: the per-call audit insert was a quarter of the MCP
layer's throughput at 20 clients.

The waiting side is asyncio (the server runs on anyio's asyncio backend, over HTTP and
stdio): the writer settles each call's future on its event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading

from memserver.errors import StoreError
from memserver.server.audit import AuditEntry, AuditLog

logger = logging.getLogger(__name__)

MAX_BATCH = 256
_Item = tuple[AuditEntry, asyncio.AbstractEventLoop, "asyncio.Future[None]"]


class AuditWriter:
    """One thread writing the rows calls hand it (see the module docstring)."""

    def __init__(self, log: AuditLog, max_batch: int = MAX_BATCH) -> None:
        self.log = log
        self.max_batch = max_batch
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    async def record(self, entry: AuditEntry) -> AuditEntry:
        """Append ``entry`` (``audit.make_entry``) and wait until it is committed
        (StoreError if it failed)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._start()
        self._queue.put((entry, loop, done))
        await done
        return entry

    def close(self, timeout: float = 10.0) -> None:
        """Write what is waiting, then stop the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="audit-writer", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            stop = False
            while len(batch) < self.max_batch:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            error: BaseException | None = None
            try:
                self.log.append_many([entry for entry, _, _ in batch])
            except StoreError as exc:
                error = exc
            except Exception as exc:  # never leave a call waiting forever
                logger.exception("the audit writer failed")
                error = StoreError(f"could not write the audit log: {exc}")
            # One wake-up per event loop for the whole batch, not one per call.
            waiting: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
            for _, loop, done in batch:
                waiting.setdefault(loop, []).append(done)
            for loop, futures in waiting.items():
                with contextlib.suppress(RuntimeError):  # its event loop has closed
                    loop.call_soon_threadsafe(_settle, futures, error)
            if stop:
                return


def _settle(futures: list[asyncio.Future[None]], error: BaseException | None) -> None:
    for done in futures:
        if done.done():  # the call was cancelled meanwhile
            continue
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)
