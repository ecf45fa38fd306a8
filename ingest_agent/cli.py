"""``ingest-agent``: turn new and changed notes in source/ into pages, over MCP.

::

    MEMORY_TOKEN=... ingest-agent --url http://127.0.0.1:8787/mcp      # one pass
    ingest-agent --kb ./my_kb                      # local: spawns a trusted stdio server
    ingest-agent --kb ./my_kb --config config.dev.yaml   # the server reads it too
    ingest-agent --watch 60s                       # keep polling; Ctrl-C stops cleanly
    ingest-agent --watch 30s --heartbeat /tmp/alive   # touched at every pass and note
    ingest-agent --file meetings/2026-06-18.md     # one source (even if ingested)
    ingest-agent --dry-run                         # print the pages, write nothing
    ingest-agent --json --budget 200000            # JSON summary; stop past 200k tokens

The memory server is reached at ``--url``, else ``MEMORY_URL``, else ``mcp.url`` of the
config, with the write token in ``MEMORY_TOKEN`` (or the variable ``mcp.token_env``
names). With an LLM configured (``llm`` block or ``LLM_BASE_URL``/``LLM_MODEL``) the
model extracts; without one the deterministic rules extractor does (``--rules`` forces
it). Exit status: 0 done, 1 some sources failed, 2 a usage or configuration error,
3 stopped by the token budget, 130 interrupted. With ``--watch`` each pass opens its
own MCP session, and a pass that cannot reach the server (or whose database is down)
is logged in one line and tried again at the next interval; its sources stay queued.
Without it, such a pass is one line and another try, five in all (2, 4, 8, 16 s apart),
then one line and exit status 1.

Progress: on a terminal a bar (notes done / total, the current note, elapsed, time
left); each note's line is printed when that note finishes (also into a log file or a
pipe), then a totals line. ``--json`` prints the summary object instead (one per pass
with ``--watch``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import signal
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.shared.exceptions import MCPError

from ingest_agent.agent import IngestAgent, RunObserver, RunSummary
from ingest_agent.errors import IngestUsageError, ServerUnreachable
from ingest_agent.heartbeat import Heartbeat
from ingest_agent.memory import Memory, is_unavailable
from ingest_agent.records import SourceOutcome
from memserver.clients.config import Settings, load_settings
from memserver.clients.llm import LLMClient, TokenBudget
from memserver.clients.mcp import MemoryClient, connect, open_stdio
from memserver.clients.profile import profile_for
from memserver.errors import MemoryError_, ToolCallError
from memserver.kb.page import Page, render_page
from memserver.kb.schema import FolderSpec
from memserver.terminal.output import print_json
from memserver.terminal.program import add_config_option, parse_interval, run_translating_errors
from memserver.terminal.progress import NoteDone, NoteProgress, failure_line

log = logging.getLogger("ingest_agent")

PASS_ATTEMPTS = 5  # tries of a pass without --watch while the server cannot be reached
PASS_BACKOFF = 2.0  # seconds before the second try; doubled each time
PASS_BACKOFF_MAX = 30.0
# What reaching the server over HTTP or stdio fails with (a closed stream, a dropped
# connection, a session error): never a mistake of ours, worth another try.
_TRANSPORT = (
    OSError,
    httpx2.HTTPError,
    MCPError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ingest-agent",
        description="Ingest new and changed source notes into schema-shaped pages through "
        "the memory server (MCP). One pass by default.",
    )
    add_config_option(parser)
    parser.add_argument("--url", help="memory server MCP URL (default: MEMORY_URL or mcp.url)")
    parser.add_argument(
        "--kb", help="serve this knowledge base locally over stdio (trusted) instead of --url"
    )
    parser.add_argument(
        "--watch", metavar="DURATION", help="keep polling, e.g. 60s; Ctrl-C stops cleanly"
    )
    parser.add_argument(
        "--heartbeat",
        metavar="FILE",
        help="with --watch: touch FILE at every pass and note (for a container healthcheck)",
    )
    parser.add_argument(
        "--file", metavar="PATH", help="ingest this one source (path under source/)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the pages, write nothing")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--budget", type=int, metavar="N", help="LLM token budget for the run")
    parser.add_argument(
        "--rules", action="store_true", help="use the rules extractor even if an LLM is configured"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return run_translating_errors(
        "ingest-agent", lambda: _start(args), failed_label="", stopped="stopped"
    )


def _start(args: argparse.Namespace) -> int:
    interval = parse_interval(args.watch) if args.watch else None
    if args.budget is not None and args.budget <= 0:
        raise IngestUsageError(f"--budget must be positive, not {args.budget}")
    settings = load_settings(args.config)
    return _unwrapped(lambda: anyio.run(_until_signal, args, settings, interval))


async def _until_signal(
    args: argparse.Namespace, settings: Settings, interval: float | None
) -> int:
    """``_run`` until it ends or SIGINT/SIGTERM arrives; a signal becomes KeyboardInterrupt.

    The signal cancels the run's anyio cancel scope, which every await below it sees
    (level-triggered), wherever the run is: an MCP call, a model call, a sleep. Left to
    the event loop's default (a one-off cancellation of the main task), a Ctrl-C that
    landed inside a timeout scope of a library could be absorbed there, and the watch
    loop went on as if nothing happened.
    """
    stopped = False
    result = 0
    async with anyio.create_task_group() as group:

        async def stop_on_signal() -> None:
            nonlocal stopped
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    stopped = True
                    group.cancel_scope.cancel()
                    return

        group.start_soon(stop_on_signal)
        result = await _run(args, settings, interval)
        group.cancel_scope.cancel()
    if stopped:
        raise KeyboardInterrupt
    return result


def _unwrapped(run: Callable[[], int]) -> int:
    """Run, turning an exception group from the MCP session's tasks into its cause.

    An error raised inside the session (a refused token, a missing tool) reaches us
    wrapped in the session's task group; the user should see the error itself.
    """
    try:
        return run()
    except BaseExceptionGroup as group:
        for leaf in _leaves(group):
            if isinstance(leaf, MemoryError_ | KeyboardInterrupt):
                raise leaf from None
        raise


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


@asynccontextmanager
async def _client(args: argparse.Namespace, settings: Settings) -> AsyncIterator[MemoryClient]:
    if args.kb:
        if not (Path(args.kb) / "schema.yaml").is_file():
            raise IngestUsageError(f"no schema.yaml in {args.kb}", "pass --kb a knowledge base dir")
        # The server reads the same config.yaml (embedding model, database, limits).
        env = {"MEMORY_CONFIG": str(Path(args.config).resolve())} if args.config else None
        async with open_stdio(
            args.kb, trusted=True, env=env, timeout=settings.mcp.timeout
        ) as client:
            yield client
        return
    endpoint = settings.mcp
    if args.url:
        endpoint = dataclasses.replace(endpoint, base_url=args.url)
    async with connect(endpoint) as client:
        yield client


def _source_path(args: argparse.Namespace) -> str | None:
    if not args.file:
        return None
    path = Path(args.file)
    if path.is_absolute() and args.kb:
        source = (Path(args.kb) / "source").resolve()
        try:
            return path.resolve().relative_to(source).as_posix()
        except ValueError:
            raise IngestUsageError(
                f"{path} is not under {source}", "pass a file in source/"
            ) from None
    return path.as_posix().removeprefix("./").removeprefix("source/")


async def _run(args: argparse.Namespace, settings: Settings, interval: float | None) -> int:
    budget = TokenBudget(args.budget if args.budget is not None else settings.budget_tokens)
    llm_client = None
    if settings.llm is not None and not args.rules:
        # One extraction call, retries included, ends within llm.timeout; past it the
        # note is read by the rules extractor and the run goes on.
        llm_client = LLMClient(
            settings.llm,
            budget,
            max_attempts=2,
            backoff=0.5,
            max_backoff=5,
            deadline=settings.llm.timeout,
        )
    try:
        shown = None if args.json else Shown(NoteProgress(sys.stdout))
        try:
            if interval is None:
                summary = await _one_pass(args, settings, budget, llm_client, shown)
                _report(summary, args.json, shown)
                return _status(summary)
            while True:  # --watch: a pass in its own session, a bounded sleep, again
                passed = await _watch_pass(args, settings, budget, llm_client, shown)
                if passed is not None and (passed.sources or passed.stopped or passed.paused):
                    _report(passed, args.json, shown, compact=True)
                if passed is not None and passed.stopped:
                    return 3
                await anyio.sleep(interval)
        finally:
            if shown is not None:
                shown.display.close()
    finally:
        if llm_client is not None:
            llm_client.close()


async def _one_pass(
    args: argparse.Namespace,
    settings: Settings,
    budget: TokenBudget,
    llm: LLMClient | None,
    shown: Shown | None,
) -> RunSummary:
    """The one pass without ``--watch``. A memory server that cannot be reached (or
    went away during the pass) is one line and another try, ``PASS_ATTEMPTS`` in all,
    the notes done so far kept; after the last, ServerUnreachable (one line, exit 1)."""
    only = _source_path(args)
    for attempt in range(1, PASS_ATTEMPTS + 1):
        try:
            async with _client(args, settings) as client:
                agent = await _agent(client, args, budget, llm)
                try:
                    return await agent.run([only] if only else None, observer=shown)
                except anyio.get_cancelled_exc_class():
                    _report_interrupted(agent.progress, args.json)
                    raise
        except Exception as exc:
            reason = unreachable(exc)
            if reason is None:
                raise
            if attempt == PASS_ATTEMPTS:
                raise ServerUnreachable(_where(args, settings), reason, attempt) from None
            wait = min(PASS_BACKOFF * 2 ** (attempt - 1), PASS_BACKOFF_MAX)
            log.warning(
                "the memory server is unavailable (%s); trying again in %.0f s (%d of %d)",
                reason,
                wait,
                attempt + 1,
                PASS_ATTEMPTS,
            )
            await anyio.sleep(wait)
    raise AssertionError("unreachable")


def _where(args: argparse.Namespace, settings: Settings) -> str:
    if args.kb:
        return f"the stdio server for {args.kb}"
    return str(args.url or settings.mcp.base_url)


async def _agent(
    client: MemoryClient, args: argparse.Namespace, budget: TokenBudget, llm: LLMClient | None
) -> IngestAgent:
    memory = Memory(client, dry_run=args.dry_run)
    schema = await memory.start()
    extractor = None
    if llm is not None:
        from ingest_agent.llm.extractor import LLMExtractor

        extractor = LLMExtractor(schema, llm, profile_for(llm.endpoint))
    return IngestAgent(
        memory,
        schema,
        llm=extractor,
        budget=budget,
        dry_run=args.dry_run,
        on_page=_print_page if args.dry_run and not args.json else None,
    )


async def _watch_pass(
    args: argparse.Namespace,
    settings: Settings,
    budget: TokenBudget,
    llm: LLMClient | None,
    shown: Shown | None,
) -> RunSummary | None:
    """One ``--watch`` pass; None when the server could not be reached this time.

    Each pass opens its own MCP session, so an idle interval longer than the server's
    session lifetime, or a restarted server, costs nothing.
    """
    observer: RunObserver | None = shown
    if args.heartbeat:
        observer = Heartbeat(Path(args.heartbeat), shown)
        observer.beat()
    try:
        async with _client(args, settings) as client:
            agent = await _agent(client, args, budget, llm)
            return await agent.run(observer=observer)
    except Exception as exc:
        reason = unreachable(exc)
        if reason is None:
            raise
        log.warning("the memory server is unavailable (%s); trying again next interval", reason)
        return None


def unreachable(exc: BaseException) -> str | None:
    """One line saying why the memory server could not be reached (or its database),
    when that is all ``exc`` is (an exception group of the session's tasks included): the
    next try may not meet it. None for anything else (a refused token, a missing tool),
    which stops the agent with its error."""

    def passing(leaf: BaseException) -> bool:
        if isinstance(leaf, ToolCallError):
            return is_unavailable(leaf)
        return isinstance(leaf, _TRANSPORT)

    leaves = _leaves(exc)
    if not leaves or not all(passing(leaf) for leaf in leaves):
        return None
    first = leaves[0]
    text = " ".join(str(first).split())[:300]
    return f"{type(first).__name__}: {text}" if text else type(first).__name__


def _status(summary: RunSummary) -> int:
    if summary.stopped:
        return 3
    return 1 if summary.count("failed") or summary.paused else 0


def _print_page(page_id: str, page: Page, folder: FolderSpec) -> None:
    sys.stdout.write(f"=== {page_id}\n{render_page(page, folder)}\n")


class Shown:
    """The run's progress on screen: each note as it finishes (``NoteProgress``)."""

    def __init__(self, display: NoteProgress) -> None:
        self.display = display

    def started(self, total: int) -> None:
        self.display.start(total)

    def reading(self, path: str) -> None:
        self.display.reading(path)

    def finished(self, outcome: SourceOutcome) -> None:
        self.display.finished(
            NoteDone(
                outcome.path, outcome.status, len(outcome.pages), outcome.error, outcome.seconds
            )
        )


def _report_interrupted(progress: RunSummary | None, as_json: bool) -> None:
    """With ``--json``, what was done before a signal stopped the run (the notes not
    reached stay pending; each note had its line on screen without ``--json``)."""
    if as_json and progress is not None:
        progress.stopped = "interrupted by a signal; the notes not listed stay pending"
        _report(progress, True, None)


def _report(
    summary: RunSummary, as_json: bool, shown: Shown | None, *, compact: bool = False
) -> None:
    """The totals (each note had its line when it finished)."""
    data: dict[str, Any] = summary.as_dict()
    if as_json:
        if compact:
            sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
            sys.stdout.flush()
        else:
            print_json(data)
        return
    if shown is not None:
        shown.display.close()
    tail = f" (stopped: {summary.stopped})" if summary.stopped else ""
    tail += f" (paused, the rest stays queued: {summary.paused})" if summary.paused else ""
    extractors = sorted({s.extractor for s in summary.sources if s.extractor})
    failures = summary.failures()
    named = f" ({'; '.join(failure_line(p, e) for p, e in failures)})" if failures else ""
    print(
        f"{summary.count('ingested')} ingested, {summary.count('failed')} failed{named}, "
        f"{summary.llm_calls} LLM calls, {summary.tokens} tokens, "
        f"{summary.seconds:.1f}s [{', '.join(extractors) or '-'}]{tail}"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
