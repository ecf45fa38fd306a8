"""The ingest loop: every pending source into schema-shaped pages, over MCP only.

For each source, oldest document first (``source_pending``)::

    source_claim (a lease: another agent's note, or one done meanwhile, is skipped) ->
    source_read -> redact check -> kb_route (a hint; without a model, only when it could
    change the rules' folder) -> extract (LLM, or rules without one) -> stub pages for
    link targets -> kb_resolve every entity -> resolve events on their date -> link
    values rewritten to the resolved titles -> a dated timeline entry on every entity an
    event links to (attendees, company ...) -> write entity pages, then event pages, a
    few at once unless a model merges them or the run is dry (kb_get_page -> merge ->
    kb_put_page with base_version; a schema rejection gets one repair round, a version
    conflict a re-read and a new merge) -> source_mark (ingested with the pages and the
    hash read, or failed with the reason) -> source_release.

A model never fails a note: an answer that stays unusable, a call past its deadline or a
model server that is down leaves the note to the rules extractor (``degraded`` in its
ledger entry says why), and a failing merge or repair call falls back to the rules'
merge or repair. A failure of one source (a page the server keeps refusing, a tool call
the server did not answer within the MCP request timeout) marks it failed with the
reason and the run goes on; a spent token budget, a refused token or a server set up
wrong (a ``setup`` tool error, e.g. the embedding model changed) stops the run.
With the small profile (``memserver.clients.profile``) the rules extractor reads every
note and the model only fills the fields it left empty; sections are merged and pages
repaired by rules. Every write is a merge into the page as stored, so killing the agent at any point
and running it again finishes the work without duplicates: timeline entries already
present are not added again and unchanged pages are not written.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT

from ingest_agent.errors import ServerSetupError, ServerUnavailable, SourceFailed
from ingest_agent.extract.rules import RulesExtractor
from ingest_agent.llm.review import ReviewPolicy
from ingest_agent.memory import (
    WRITING_FOR,
    Memory,
    is_unavailable,
    is_validation,
    is_version_conflict,
)
from ingest_agent.names import norm
from ingest_agent.pages.drafts import (
    Work,
    add_stubs,
    combine,
    dedupe,
    event_entries,
    linked,
    repair_by_rules,
)
from ingest_agent.pages.held import review_reason
from ingest_agent.pages.holders import Holders
from ingest_agent.pages.merge import Conflict, MergeResult, Order, default_section_merge, merge_page
from ingest_agent.pages.resolution import Resolver
from ingest_agent.pages.reversals import Reversals
from ingest_agent.records import (
    Draft,
    Extraction,
    Source,
    SourceOutcome,
    is_dated,
)
from memserver.clients.llm import TokenBudget
from memserver.clients.profile import STANDARD
from memserver.clients.threads import run_abandonable
from memserver.errors import (
    BudgetExceeded,
    LLMError,
    LLMTimeout,
    LLMUnusable,
    MemoryError_,
    ServerAuthError,
    ToolCallError,
    ToolErrorKind,
    UserError,
)
from memserver.kb.page import Page, page_slug, validate_page
from memserver.kb.redact import has_private, redact_private
from memserver.kb.schema import FolderSpec, Schema

if TYPE_CHECKING:
    from ingest_agent.llm.extractor import LLMExtractor

log = logging.getLogger(__name__)
T = TypeVar("T")

WRITE_ATTEMPTS = 4  # a version conflict re-reads and merges again, this many times at most
WRITES_AT_ONCE = 4  # page writes of one note in flight together
LEASE_RELEASE_SECONDS = 10  # a source's lease is given back within this, or lapses

# Called with each page as it would be written (``--dry-run`` prints them).
PageHook = Callable[[str, Page, FolderSpec], None]


class RunObserver(Protocol):
    """Told how a run goes as it goes (the CLI's progress bar and per-note lines)."""

    def started(self, total: int) -> None: ...

    def reading(self, path: str) -> None: ...

    def finished(self, outcome: SourceOutcome) -> None: ...


@dataclass
class RunSummary:
    """One pass: an outcome per source, totals, and why it stopped early (if it did)."""

    sources: list[SourceOutcome] = field(default_factory=list)
    # sources the server could not take (a file that does not convert): (path, why)
    not_taken: list[tuple[str, str]] = field(default_factory=list)
    stopped: str | None = None
    paused: str | None = None  # the server's database was unavailable; try again later
    seconds: float = 0.0
    tool_calls: int = 0
    llm_calls: int = 0
    tokens: int = 0

    def count(self, status: str) -> int:
        found = sum(1 for s in self.sources if s.status == status)
        return found + (len(self.not_taken) if status == "failed" else 0)

    def failures(self) -> list[tuple[str, str]]:
        """Every failed note of the run, with why: those read and failed, then those the
        server could not take."""
        read = [(s.path, s.error or "failed") for s in self.sources if s.status == "failed"]
        return read + self.not_taken

    def as_dict(self) -> dict[str, Any]:
        return {
            "ingested": self.count("ingested"),
            "failed": self.count("failed"),
            "failures": [{"path": p, "error": e} for p, e in self.failures()],
            "dry_run": self.count("dry-run"),
            "stopped": self.stopped,
            "paused": self.paused,
            "seconds": round(self.seconds, 3),
            "tool_calls": self.tool_calls,
            "llm_calls": self.llm_calls,
            "tokens": self.tokens,
            "sources": [s.as_dict() for s in self.sources],
        }


class IngestAgent:
    """Runs passes over the pending sources of one memory server (see the module docstring)."""

    def __init__(
        self,
        memory: Memory,
        schema: Schema,
        *,
        llm: LLMExtractor | None = None,
        budget: TokenBudget | None = None,
        dry_run: bool = False,
        on_page: PageHook | None = None,
    ) -> None:
        self.memory = memory
        self.schema = schema
        self.llm = llm
        self.rules = RulesExtractor(schema)
        self.budget = budget if budget is not None else TokenBudget(None)
        self.dry_run = dry_run
        self.on_page = on_page
        self.resolver = Resolver(memory, schema)
        self.reversals = Reversals(memory, schema)
        self.holders = Holders(memory, schema)
        self.profile = llm.profile if llm is not None else STANDARD
        self._degraded: dict[str, None] = {}  # this note's: the model's work replaced by rules
        self.progress: RunSummary | None = None  # the current or last run's, as it goes
        # Who this agent is in its leases on sources (source_claim): one per process. An
        # agent restarted in its container (same host name, pid 1) takes its leases back.
        self.holder = f"ingest-agent@{socket.gethostname()}:{os.getpid()}"
        # failed sources already reported by this process, by (path, hash): a watching
        # agent names each once, not at every pass
        self._reported: set[tuple[str, str]] = set()

    @property
    def extractor_name(self) -> str:
        return "llm" if self.llm is not None else "rules"

    # -- runs ------------------------------------------------------------------------

    async def run(
        self, only: Sequence[str] | None = None, *, observer: RunObserver | None = None
    ) -> RunSummary:
        """Ingest ``only`` these sources, or every pending one, oldest document first;
        ``observer`` hears of each note as it starts and as it finishes."""
        self.resolver.reset()
        self.reversals.reset()
        started = time.perf_counter()
        calls_before = self.memory.calls
        summary = self.progress = RunSummary()  # so far, for a run that is interrupted
        paths = list(only) if only is not None else [s["path"] for s in await self.memory.pending()]
        if only is None:
            for path, digest, why in self.memory.failed_sources:
                if (path, digest) not in self._reported:
                    self._reported.add((path, digest))
                    summary.not_taken.append((path, why))
        if observer is not None and paths:
            observer.started(len(paths))
        try:  # the totals so far, also when the run is interrupted
            for path in paths:
                try:
                    if not await self._claim(path, pending_only=only is None):
                        continue  # another agent works on it, or has done it
                    if observer is not None:
                        observer.reading(path)
                    try:
                        outcome = await self.ingest(path)
                    finally:
                        await self._release(path)
                except BudgetExceeded as exc:
                    summary.stopped = str(exc)
                    break
                except ServerUnavailable as exc:
                    summary.paused = str(exc)  # the rest stays queued for the next pass
                    break
                if observer is not None:
                    observer.finished(outcome)
                summary.sources.append(outcome)
                summary.llm_calls += outcome.llm_calls
                summary.tokens += outcome.tokens
        finally:
            summary.tool_calls = self.memory.calls - calls_before
            summary.seconds = time.perf_counter() - started
        return summary

    async def _claim(self, path: str, *, pending_only: bool) -> bool:
        """The lease on ``path`` (no other agent ingests it meanwhile); a server that
        cannot give one stops or pauses the run as ``ingest`` would."""
        try:
            return await self.memory.claim(path, self.holder, pending_only=pending_only)
        except ToolCallError as exc:
            if is_unavailable(exc):
                raise ServerUnavailable(exc.server_message) from exc
            if exc.kind is ToolErrorKind.SETUP:
                raise ServerSetupError(exc.server_message) from exc
            log.warning("could not claim %s, ingesting it anyway: %s", path, exc)
            return True

    async def _release(self, path: str) -> None:
        """Give the lease back, also when the run is being cancelled (Ctrl-C); a session
        that is gone by then only lets the lease lapse (its error is not the run's)."""
        with anyio.move_on_after(LEASE_RELEASE_SECONDS, shield=True):
            try:
                await self.memory.release(path, self.holder)
            except Exception as exc:
                log.info("could not release %s (its lease lapses by itself): %s", path, exc)

    async def ingest(self, path: str) -> SourceOutcome:
        """One source, start to finish; failures are recorded, never raised (but the budget)."""
        started = time.perf_counter()
        outcome = SourceOutcome(path, "failed", extractor=self.extractor_name)
        calls, tokens = self.budget.calls, self.budget.used
        tool_calls = self.memory.calls
        model_seconds = self.llm.model_seconds if self.llm is not None else 0.0
        self._degraded = {}
        writing = WRITING_FOR.set(path)
        try:
            source = await self.memory.read(path)
            outcome.path = source.path
            WRITING_FOR.set(source.path)
            source = self._redacted(source)
            hint = await self.memory.route(source.content) if self._wants_hint(source) else ()
            extraction = await self._extract(source, hint)
            outcome.extractor = extraction.extractor
            # A model can be steered by the note it reads: its riskier writes wait for a person.
            review = (
                ReviewPolicy(self.schema, source, hint, extraction.reversals)
                if extraction.extractor == "llm"
                else None
            )
            outcome.dropped = list(extraction.dropped)
            outcome.reasons = list(extraction.reasons)
            self._degraded.update(dict.fromkeys(extraction.degraded))
            await self._apply(source, extraction, outcome, review)
            outcome.degraded = list(self._degraded)
            if self.dry_run:
                outcome.status = "dry-run"
            else:
                await self.memory.mark_ingested(
                    source.path, source.hash, outcome.pages, extraction.extractor,
                    extraction.dropped, outcome.degraded, outcome.reasons,
                )  # fmt: skip
                outcome.status = "ingested"
        except (BudgetExceeded, ServerAuthError):
            raise  # these stop the run; the source stays pending
        except ToolCallError as exc:
            if is_unavailable(exc):
                raise ServerUnavailable(exc.server_message) from exc  # stays pending
            if exc.kind is ToolErrorKind.SETUP:
                raise ServerSetupError(exc.server_message) from exc  # stops the run
            self._failed(outcome, path, str(exc))
            if not self.dry_run:
                await self._mark_failed(outcome.path, str(exc))
        except (SourceFailed, LLMError, UserError) as exc:
            reason = exc.reason if isinstance(exc, SourceFailed) else str(exc)
            self._failed(outcome, path, reason)
            if not self.dry_run:
                await self._mark_failed(outcome.path, reason)
        except MCPError as exc:
            # The server did not answer a tool call in time (or the session broke): this
            # note fails with the reason, the run goes on.
            reason = _mcp_reason(exc, self.memory.last_tool)
            self._failed(outcome, path, reason)
            if not self.dry_run:
                await self._mark_failed(outcome.path, reason)
        finally:
            WRITING_FOR.reset(writing)
            outcome.llm_calls = self.budget.calls - calls
            outcome.tokens = self.budget.used - tokens
            outcome.seconds = time.perf_counter() - started
            outcome.tool_calls = self.memory.calls - tool_calls
            if self.llm is not None:
                outcome.model_seconds = self.llm.model_seconds - model_seconds
        return outcome

    @staticmethod
    def _failed(outcome: SourceOutcome, path: str, reason: str) -> None:
        log.warning("ingest %s failed: %s", path, reason)
        outcome.status, outcome.error = "failed", reason

    async def _mark_failed(self, path: str, reason: str) -> None:
        try:
            await self.memory.mark_failed(path, reason)
        except ToolCallError as exc:  # e.g. the file is gone; the run still goes on
            log.warning("could not mark %s failed: %s", path, exc)

    @staticmethod
    def _redacted(source: Source) -> Source:
        """Private spans never reach a model: checked again here, whatever the server did."""
        if has_private(source.content):
            return replace(source, content=redact_private(source.content))
        return source

    # -- extraction ------------------------------------------------------------------------

    def _wants_hint(self, source: Source) -> bool:
        """A model reads the router's hint; the rules only when it could change their
        folder (routing embeds the note, the costliest call of a note without a model)."""
        return self.llm is not None or self.rules.needs_hint(source)

    async def _extract(self, source: Source, hint: Sequence[str]) -> Extraction:
        """The model's extraction; the rules' when there is no model or it fails for this
        note (``degraded`` says why; a spent budget still stops the run)."""
        mentions = self.rules.mentions(source)
        known = await self.resolver.lookup(mentions)
        facts = self.memory.entity_links()
        if self.llm is None:
            return self.rules.extract(source, hint, known, facts)
        llm = self.llm
        titles = await self.resolver.entity_titles()
        # the pages the note's own names resolve to ("Nomin Trade" -> Номин Трейд), not
        # every page the resolver knows: a value naming a page the note never names (a
        # manager it never mentions) is not grounded in it
        said = {norm(name) for name in mentions}
        resolved = [title for key, (_, title) in known.items() if key in said]
        rules = (
            self.rules.extract(source, hint, known, facts) if self.profile.fill_from_rules else None
        )
        try:
            if rules is not None:
                base = rules
                named = list(known.values())
                return await run_abandonable(
                    lambda: llm.fill(source, base, titles, resolved, named)
                )
            return await run_abandonable(lambda: llm.extract(source, hint, titles, resolved))
        except BudgetExceeded:
            raise
        except LLMError as exc:
            reason = _degraded_reason(exc)
            log.warning("%s: the model's extraction failed (%s), reading it by rules: %s",
                        source.path, reason, exc)  # fmt: skip
        rules = rules if rules is not None else self.rules.extract(source, hint, known, facts)
        return replace(rules, degraded=(reason,))

    # -- applying an extraction ----------------------------------------------------------------

    async def _apply(
        self,
        source: Source,
        extraction: Extraction,
        outcome: SourceOutcome,
        review: ReviewPolicy | None = None,
    ) -> None:
        works = combine(extraction.drafts, self.schema)
        add_stubs(works, self.schema)
        names: dict[tuple[str, str], str | None] = {}
        entities = [w for w in works if not is_dated(self._folder(w))]
        events = [w for w in works if is_dated(self._folder(w))]
        for work in entities:
            await self.resolver.resolve_entity(work, names)
        entities = dedupe(entities)
        for work in events:
            await self.resolver.resolve_event(work)
            if self.reversals.holds(work.draft.folder):
                same = await self.reversals.same_decision(
                    work.draft.folder, work.page_id, work.draft.page
                )
                work.page_id = same or work.page_id
        for work in [*entities, *events]:
            work.draft = replace(work.draft, page=linked(work.draft, names, self.schema))
        event_entries(source, entities, events, self.schema)
        # One at a time when a model merges (one request at a time to it) and in a dry
        # run (its pages are printed in order).
        by_model = self.llm is not None and self.profile.merge_by_model
        at_once = 1 if by_model or self.dry_run else WRITES_AT_ONCE
        for group in (entities, events):  # the pages of a group are written side by side
            live = [w for w in group if not w.dropped]
            written = await _side_by_side(
                [partial(self._write, source, w, extraction, review) for w in live], at_once
            )
            for work, (page_id, changed, conflicts) in zip(live, written, strict=True):
                work.page_id = page_id
                outcome.pages.append(page_id)
                if changed:
                    outcome.changed.append(page_id)
                outcome.conflicts += [c.as_dict() for c in conflicts]
                if not is_dated(self._folder(work)):
                    self.resolver.remember(work.draft.folder, work.draft.title)
        await self._reversals(extraction, [*entities, *events], outcome)
        await self._holders(extraction, entities, outcome)

    async def _holders(
        self, extraction: Extraction, entities: Sequence[Work], outcome: SourceOutcome
    ) -> None:
        """The earlier holders of the one-holder roles the note names a new holder of
        (:mod:`ingest_agent.pages.holders`)."""
        if not extraction.role_claims:
            return
        written = {
            (w.draft.folder, norm(name)): w.page_id
            for w in entities
            if w.page_id and not w.dropped
            for name in (w.draft.title, *w.draft.page.aliases)
        }
        changed, said = await self.holders.record(extraction.role_claims, written)
        outcome.changed += [p for p in changed if p not in outcome.changed]
        outcome.pages += [p for p in changed if p not in outcome.pages]
        outcome.reasons += said

    async def _reversals(
        self, extraction: Extraction, works: Sequence[Work], outcome: SourceOutcome
    ) -> None:
        """The reversals the note states, on both decisions; and, now that its decision
        pages exist, the ones earlier notes stated about them (:mod:`ingest_agent.pages.reversals`)."""
        ids = {
            (w.draft.folder, norm(w.draft.title)): w.page_id
            for w in works
            if w.page_id and not w.dropped
        }
        refs = [
            (ref, page_id)
            for ref in extraction.reversals
            if (page_id := ids.get((ref.folder, norm(ref.title)))) is not None
        ]
        written = [pid for (folder, _), pid in ids.items() if self.reversals.links(folder)]
        if not refs and not written:
            return
        for page_id in await self.reversals.record(refs, written):
            if page_id not in outcome.changed:
                outcome.changed.append(page_id)

    def _folder(self, work: Work) -> FolderSpec:
        return self.schema.folder(work.draft.folder)

    # -- writing -------------------------------------------------------------------------

    async def _write(
        self,
        source: Source,
        work: Work,
        extraction: Extraction,
        review: ReviewPolicy | None = None,
    ) -> tuple[str, bool, tuple[Conflict, ...]]:
        """Merge into the stored page and put it (see the module docstring); (id, changed, conflicts)."""
        spec = self._folder(work)
        draft = work.draft
        names = (draft.title, *draft.page.aliases)
        dates = extraction.dates_of(spec.name, names)
        plain = extraction.plain_of(spec.name, names)
        filled = extraction.filled_of(spec.name, names)
        page_id = work.page_id
        repaired = False
        for _ in range(WRITE_ATTEMPTS):
            stored = await self.memory.get(page_id) if page_id else None
            others = (
                await self.memory.doc_dates(s for s in stored.page.sources if s != source.path)
                if stored
                else {}
            )
            target = page_id or _draft_id(draft.page, spec)
            new = _unfilled(draft.page, stored.page, filled) if stored and filled else draft.page
            result = await self._merge(
                stored.page if stored else None, new, spec, target, source, others, dates, plain
            )
            if review is not None:
                result = review.hold(stored.page if stored else None, result, spec, target)
            if stored is not None and not result.changed:
                return stored.id, False, ()
            page = result.page
            problems = [str(p) for p in validate_page(page, spec)]
            if problems:
                if repaired:
                    raise SourceFailed(
                        source.path, f"{spec.name}/{page.title}: {'; '.join(problems)}"
                    )
                page = await self._repair(page, spec, problems)
                repaired = True
                still = [str(p) for p in validate_page(page, spec)]
                if still:
                    raise SourceFailed(source.path, f"{spec.name}/{page.title}: {'; '.join(still)}")
            if self.on_page is not None:
                self.on_page(target, page, spec)
            try:
                new_id, _ = await self.memory.put(
                    spec.name,
                    page,
                    page_id,
                    stored.version if stored else None,
                    [c.record() for c in result.conflicts],
                    review=review_reason(result.conflicts),
                )
            except ToolCallError as exc:
                if is_version_conflict(exc):
                    page_id = page_id or _draft_id(page, spec)
                    continue  # someone wrote it meanwhile (or it exists): re-read and merge
                if is_validation(exc) and not repaired:
                    draft = Draft(draft.folder, await self._repair(page, spec, _problems(exc)))
                    repaired = True
                    continue
                raise
            return new_id, True, result.conflicts
        raise SourceFailed(
            source.path, f"{page_id or draft.title}: kept changing while being written"
        )

    async def _merge(
        self,
        existing: Page | None,
        draft: Page,
        spec: FolderSpec,
        page_id: str,
        source: Source,
        others: dict[str, dt.date | None],
        field_dates: dict[str, dt.date],
        plain: frozenset[str] = frozenset(),
    ) -> MergeResult:
        merger = None
        if self.llm is not None and existing is not None and self.profile.merge_by_model:
            llm = self.llm

            def merger(current: Any, new: Any, order: Order) -> Any:
                try:
                    return llm.merge_sections(existing, spec, current, new, order, source)
                except BudgetExceeded:
                    raise
                except LLMError as exc:  # the rules' merge instead: never a failed note
                    log.warning("%s: the model's merge failed, merging by rules: %s", page_id, exc)
                    self._degraded.setdefault(f"merge_{_degraded_reason(exc)}", None)
                    return default_section_merge(current, new, order)

        def merged() -> MergeResult:
            return merge_page(
                existing,
                draft,
                spec,
                page_id=page_id,
                source=source.path,
                source_date=source.doc_date,
                other_sources=others,
                section_merger=merger,
                field_dates=field_dates,
                plain_fields=plain,
            )

        if merger is not None:  # asks the model: a Ctrl-C must not wait for its answer
            return await run_abandonable(merged)
        return await anyio.to_thread.run_sync(merged)

    async def _repair(self, page: Page, spec: FolderSpec, problems: list[str]) -> Page:
        """One repair round with every problem listed: the model's, or the rules' own
        (without a model, with the small profile, or when the model's repair fails)."""
        if self.llm is not None and self.profile.merge_by_model:
            llm = self.llm
            try:
                return await run_abandonable(lambda: llm.repair(page, spec, problems))
            except BudgetExceeded:
                raise
            except LLMError as exc:
                log.warning("%s: the model's repair failed, repairing by rules: %s", spec.name, exc)
                self._degraded.setdefault(f"repair_{_degraded_reason(exc)}", None)
        return repair_by_rules(page, spec, problems)


async def _side_by_side(calls: Sequence[Callable[[], Awaitable[T]]], at_once: int) -> list[T]:
    """The results of ``calls``, run at most ``at_once`` at a time, in their order.

    A page write waits mostly on the server (its database, its disk); the pages of one
    note are distinct, so their writes overlap. The first failure cancels the others and
    is raised as itself, as a single write's would be."""
    if len(calls) <= 1 or at_once <= 1:
        return [await call() for call in calls]
    results: dict[int, T] = {}
    failures: list[Exception] = []
    limit = anyio.CapacityLimiter(at_once)

    async def one(index: int, call: Callable[[], Awaitable[T]]) -> None:
        async with limit:
            try:
                results[index] = await call()
            except Exception as exc:
                failures.append(exc)
                group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        for index, call in enumerate(calls):
            group.start_soon(one, index, call)
    if failures:
        raise failures[0]
    return [results[index] for index in range(len(calls))]


def _degraded_reason(exc: LLMError) -> str:
    if isinstance(exc, LLMTimeout):
        return "llm_timeout"
    return "llm_unusable" if isinstance(exc, LLMUnusable) else "llm_unavailable"


def _mcp_reason(exc: MCPError, tool: str | None) -> str:
    what = f"the memory server's {tool}" if tool else "a memory server tool call"
    if exc.code == REQUEST_TIMEOUT:  # this client's own request timeout
        return (
            f"{what} did not answer within the MCP request timeout ({exc}); the note stays "
            "failed until it changes or is reset: raise mcp.timeout, or check what makes the "
            "server slow (a model it calls, a busy database)"
        )
    return f"{what} failed: {exc}"


def _unfilled(draft: Page, stored: Page, filled: frozenset[str]) -> Page:
    """``draft`` without the model-filled fields the stored page already has a value for."""
    keep = {
        k: v
        for k, v in draft.fields.items()
        if k not in filled or stored.fields.get(k) in (None, "", [])
    }
    return replace(draft, fields=keep) if len(keep) != len(draft.fields) else draft


def _draft_id(page: Page, spec: FolderSpec) -> str:
    try:
        return f"{spec.name}/{page_slug(page, spec)}"
    except MemoryError_:
        return f"{spec.name}/<new>"


def _problems(exc: ToolCallError) -> list[str]:
    """The page problems the server listed (its whole message if it listed none)."""
    return [str(p) for p in exc.problems] or [exc.server_message]
