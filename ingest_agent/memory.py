"""The agent's view of the memory server: typed calls over MCP, nothing else.

The agent reaches knowledge only through the server's tools (``source_*``, ``kb_*``).
``Memory`` wraps a ``memserver.clients.mcp.MemoryClient`` with the calls the loop needs
and remembers, for one run, what it learnt: page names it resolved or wrote (so a page
created earlier in the pass is found again without a round trip), and the document
dates of sources (to order a page's sources in time for the merge rules).

With ``dry_run`` nothing is written: puts land in an in-memory overlay that later reads
and lookups of the same run see, so a dry run renders exactly what a real run would
write.
"""

from __future__ import annotations

import datetime as dt
import difflib
import logging
import os
import socket
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ingest_agent.names import norm
from ingest_agent.records import Source, StoredView, is_dated
from memserver.clients.mcp import MemoryClient
from memserver.errors import NotFoundError, ToolCallError, ToolErrorKind
from memserver.kb.page import Page, TimelineEntry, as_date, page_slug
from memserver.kb.schema import Schema, schema_from_view

log = logging.getLogger(__name__)

LIST_PAGE = 500
# The note the agent is ingesting (set per source, in its own task): every page write
# names it (``kb_put_page``'s ``source``), so the server weighs the write by that note's
# trust, even when the note is already one of the page's sources.
WRITING_FOR: ContextVar[str | None] = ContextVar("writing_for", default=None)
READ_ATTEMPTS = 3  # a source edited while its pages are read is read again, this often


def is_version_conflict(exc: ToolCallError) -> bool:
    return exc.kind is ToolErrorKind.CONFLICT


def is_validation(exc: ToolCallError) -> bool:
    return exc.kind is ToolErrorKind.VALIDATION


def is_unavailable(exc: ToolCallError) -> bool:
    """The server could not reach its database (it retries; so do we, later)."""
    return exc.kind is ToolErrorKind.UNAVAILABLE


def is_not_found(exc: ToolCallError) -> bool:
    return exc.kind is ToolErrorKind.NOT_FOUND


@dataclass(frozen=True)
class Resolved:
    """A page a name resolved to: its id and title (``via`` says how)."""

    id: str
    title: str
    folder: str
    via: str


def page_from_view(view: Mapping[str, Any]) -> Page:
    return Page(
        title=view["title"],
        type=view["type"],
        fields=dict(view.get("fields") or {}),
        aliases=tuple(view.get("aliases") or ()),
        sources=tuple(view.get("sources") or ()),
        sections=dict(view.get("sections") or {}),
        timeline=tuple(
            TimelineEntry(t["date"], t["text"], t.get("source")) for t in view.get("timeline") or ()
        ),
        open_questions=tuple(view.get("open_questions") or ()),
    )


def gone_from_this_host(holder: str) -> bool:
    """Whether a lease ``holder`` (``ingest-agent@HOST:PID``, see ``Agent.holder``) is an
    agent on this host whose process no longer exists."""
    name, _, pid = holder.rpartition(":")
    if name != f"ingest-agent@{socket.gethostname()}" or not pid.isdigit() or int(pid) <= 1:
        return False  # another host's (or a container's pid 1): its lease lapses by itself
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists, owned by another user
        return False
    return False


class Memory:
    """Typed MCP calls for the ingest loop (see the module docstring)."""

    def __init__(self, client: MemoryClient, *, dry_run: bool = False) -> None:
        self.client = client
        self.dry_run = dry_run
        self.tools: frozenset[str] = frozenset()
        self.schema: Schema | None = None
        self.calls = 0
        self.last_tool: str | None = None  # the tool last called (named when a call times out)
        self._names: dict[tuple[str, str, dt.date | None], Resolved] = {}
        self._overlay: dict[str, StoredView] = {}
        self._dates: dict[str, dt.date | None] = {}
        # the sources the last listing could not take: (path, hash, why)
        self.failed_sources: list[tuple[str, str, str]] = []
        self._params: dict[str, frozenset[str]] = {}
        self._listed: dict[str, list[tuple[str, str, str]]] = {}
        self._preloaded: bool | None = None
        self._links: dict[tuple[str, str], Mapping[str, Any]] = {}

    async def start(self) -> Schema:
        """Learn the tools this token may use and the schema; returns the schema."""
        listed = await self.client.list_tools()
        self.tools = frozenset(tool.name for tool in listed)
        self._params = {
            tool.name: frozenset((tool.input_schema or {}).get("properties", {})) for tool in listed
        }
        needed = {"source_pending", "source_read", "source_mark", "kb_get_page", "kb_put_page"}
        missing = sorted(needed - self.tools)
        if missing:
            raise NotFoundError(
                f"the memory server offers no {', '.join(missing)} to this token",
                "use a token created with --write and --folders including 'source' (or '*')",
            )
        self.schema = schema_from_view(await self.call("kb_schema"))
        return self.schema

    def new_pass(self) -> None:
        """Forget what this run learnt (names, dates): a new pass sees the server afresh."""
        self._names.clear()
        self._dates.clear()
        self._listed.clear()
        self._preloaded = None
        self._overlay.clear()
        self._links.clear()

    async def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        self.calls += 1
        self.last_tool = tool
        return await self.client.call(
            tool, {k: v for k, v in (arguments or {}).items() if v is not None}
        )

    def _schema(self) -> Schema:
        if self.schema is None:
            raise RuntimeError("Memory.start() was not awaited")
        return self.schema

    # -- sources

    async def pending(self, limit: int = 1000) -> list[dict[str, Any]]:
        result = await self.call("source_pending", {"limit": limit})
        sources = list(result.get("sources") or [])
        self.failed_sources = [
            (str(f["path"]), str(f.get("hash") or ""), str(f.get("error") or "failed"))
            for f in result.get("failed") or []
        ]
        for item in sources:
            self._dates[item["path"]] = as_date(item.get("doc_date"))
        return sources

    async def read(self, path: str) -> Source:
        """The whole source; a long one comes in pages (``next_offset``), read to the end."""
        for _ in range(READ_ATTEMPTS):
            data = await self.call("source_read", {"path": path})
            parts = [data["content"]]
            while data.get("next_offset") is not None:
                following = await self.call(
                    "source_read", {"path": path, "offset": data["next_offset"]}
                )
                if following["hash"] != data["hash"]:
                    break  # edited while being read: start again
                parts.append(following["content"])
                data = {**following, "hash": data["hash"]}
            else:
                day = as_date(data.get("doc_date")) or dt.date.today()
                self._dates[data["path"]] = day
                status = str(data.get("status", ""))
                return Source(data["path"], "".join(parts), data["hash"], day, status)
        raise ToolCallError("source_read", f"{path} kept changing while being read")

    async def doc_date(self, path: str) -> dt.date | None:
        """The document date of a source (None when it no longer exists)."""
        if path not in self._dates:
            try:
                data = await self.call("source_read", {"path": path, "limit": 1})
                self._dates[path] = as_date(data.get("doc_date"))
            except ToolCallError:
                self._dates[path] = None
        return self._dates[path]

    async def doc_dates(self, paths: Iterable[str]) -> dict[str, dt.date | None]:
        return {p: await self.doc_date(p) for p in paths}

    async def mark_ingested(
        self,
        path: str,
        hash_read: str,
        pages: Sequence[str],
        extractor: str,
        dropped: Sequence[str] = (),
        degraded: Sequence[str] = (),
        reasons: Sequence[str] = (),
    ) -> None:
        args: dict[str, Any] = {
            "path": path,
            "status": "ingested",
            "hash": hash_read,
            "pages": list(pages),
        }
        if self.accepts("source_mark", "extractor"):
            args["extractor"] = extractor
        if dropped and self.accepts("source_mark", "dropped"):
            args["dropped"] = list(dropped)
        if degraded and self.accepts("source_mark", "degraded"):
            args["degraded"] = list(degraded)
        if reasons and self.accepts("source_mark", "reasons"):
            args["reasons"] = list(reasons)
        await self.call("source_mark", args)

    async def claim(self, path: str, holder: str, *, pending_only: bool = True) -> bool:
        """Take the lease on ``path`` (``source_claim``): False when another agent has it
        or it was ingested meanwhile. True without a lease on a dry run, or from a server
        without leases (one agent at a time there)."""
        if self.dry_run or "source_claim" not in self.tools:
            return True
        arguments = {"path": path, "holder": holder, "pending_only": pending_only}
        result = await self.call("source_claim", arguments)
        other = str(result.get("holder") or "")
        if not result.get("claimed") and other != holder and gone_from_this_host(other):
            # an agent killed on this host (kill -9, a crash) left its lease behind: its
            # note would wait out the whole lease, so the lease is given back and claimed
            log.info("%s: taking over the lease of %s, which no longer runs", path, other)
            await self.release(path, other)
            result = await self.call("source_claim", arguments)
        if not result.get("claimed"):
            log.info("%s skipped: %s", path, result.get("reason"))
        return bool(result.get("claimed"))

    async def release(self, path: str, holder: str) -> None:
        """Give the lease up (``source_release``); a failure only lets it lapse later."""
        if self.dry_run or "source_release" not in self.tools:
            return
        try:
            await self.call("source_release", {"path": path, "holder": holder})
        except ToolCallError as exc:
            log.warning("could not release %s (its lease lapses by itself): %s", path, exc)

    async def mark_failed(self, path: str, error: str) -> None:
        await self.call("source_mark", {"path": path, "status": "failed", "error": error[:2000]})

    def accepts(self, tool: str, argument: str) -> bool:
        """Whether the server's ``tool`` takes ``argument`` (older servers may not)."""
        return argument in self._params.get(tool, frozenset())

    # -- routing and names

    async def route(self, text: str) -> tuple[str, ...]:
        """The folders the router suggests for a text, best first (a hint; () without kb_route)."""
        if "kb_route" not in self.tools:
            return ()
        result = await self.call("kb_route", {"text": text[:20_000]})
        folders = result.get("folders") or []
        return tuple(str(f["folder"] if isinstance(f, Mapping) else f) for f in folders)

    def remember(self, page_id: str, page: Page) -> None:
        """Note a page's title and aliases so later lookups in this run find it, and an
        entity page's link fields (who works where)."""
        folder = page_id.split("/", 1)[0]
        spec = self._schema().folder(folder)
        day = as_date(page.fields.get(spec.date_field)) if spec.date_field else None
        if day is None:
            links = {f.name for f in spec.fields if f.is_link}
            self._links[(folder, norm(page.title))] = {
                k: v for k, v in page.fields.items() if k in links
            }
        for name in (page.title, *page.aliases):
            key = (folder, norm(name), day)
            self._names[key] = Resolved(page_id, page.title, folder, "this_run")
        listed = self._listed.get(folder)
        if listed is not None and all(item[0] != page_id for item in listed):
            listed.append((page_id, folder, page.title))

    def entity_links(self) -> dict[tuple[str, str], Mapping[str, Any]]:
        """The link fields of the entity pages read or written so far, by (folder,
        norm(title)) (all of them after ``preload_names``)."""
        return dict(self._links)

    def local(self, name: str, folder: str, day: dt.date | None = None) -> Resolved | None:
        return self._names.get((folder, norm(name), day))

    def similar(self, name: str, folder: str, threshold: float) -> Resolved | None:
        """The one known page whose name is at least ``threshold`` similar (difflib ratio)."""
        key = norm(name)
        scored: dict[str, tuple[float, Resolved]] = {}
        for (known_folder, known, day), hit in self._names.items():
            if known_folder != folder or day is not None:
                continue
            ratio = difflib.SequenceMatcher(None, key, known).ratio()
            if ratio >= threshold and ratio > scored.get(hit.id, (0.0, hit))[0]:
                scored[hit.id] = (ratio, hit)
        ranked = sorted(scored.values(), key=lambda item: -item[0])
        if not ranked or (len(ranked) > 1 and ranked[1][0] == ranked[0][0]):
            return None
        return ranked[0][1]

    async def resolve(
        self, name: str, folder: str | None = None, day: dt.date | None = None
    ) -> tuple[str, list[dict[str, Any]], bool]:
        """``kb_resolve``: (verdict, candidates, ambiguous); ("new", [], False) without the tool."""
        if "kb_resolve" not in self.tools or not name.strip():
            return "new", [], False
        args: dict[str, Any] = {"name": name, "folder": folder}
        if day is not None:
            args["date"] = day.isoformat()
        try:
            result = await self.call("kb_resolve", args)
        except ToolCallError as exc:
            log.warning("kb_resolve %r failed, treating it as new: %s", name, exc)
            return "new", [], False
        return (
            str(result.get("verdict", "new")),
            list(result.get("candidates") or []),
            bool(result.get("ambiguous")),
        )

    async def titles(self, folders: Iterable[str]) -> list[tuple[str, str, str]]:
        """(id, folder, title) of every page in ``folders`` (kb_list_pages, all pages)."""
        out: list[tuple[str, str, str]] = []
        for folder in folders:
            if folder in self._listed:
                out += self._listed[folder]
                continue
            listed_before = len(out)
            offset: int | None = 0
            while offset is not None:
                result = await self.call(
                    "kb_list_pages", {"folder": folder, "limit": LIST_PAGE, "offset": offset}
                )
                for item in result.get("pages") or []:
                    out.append((item["id"], folder, item["title"]))
                    if not self.dated(folder):
                        key = (folder, norm(item["title"]), None)
                        self._names.setdefault(
                            key, Resolved(item["id"], item["title"], folder, "title")
                        )
                offset = result.get("next_offset")
            self._listed[folder] = out[listed_before:]
        return out

    async def preload_names(self, folders: Sequence[str], limit: int) -> bool:
        """Learn the titles and aliases of every page in ``folders`` (once per pass).

        Only when there are at most ``limit`` pages (one ``kb_get_page`` each); returns
        whether the names are complete, so a caller can match names locally instead of
        asking ``kb_resolve`` for each.
        """
        if self._preloaded is not None:
            return self._preloaded
        listed = await self.titles(folders)
        if len(listed) > limit:
            self._preloaded = False
            return False
        for page_id, _, _ in listed:
            await self.get(page_id)
        self._preloaded = True
        return True

    def names_in(self, folders: Iterable[str]) -> dict[str, tuple[str, str]]:
        """norm(name) -> (folder, title) for the titles and aliases known in ``folders``."""
        wanted = set(folders)
        return {
            key: (hit.folder, hit.title)
            for (folder, key, day), hit in self._names.items()
            if folder in wanted and day is None
        }

    # -- pages

    async def get(self, page_id: str) -> StoredView | None:
        if page_id in self._overlay:
            return self._overlay[page_id]
        try:
            view = await self.call("kb_get_page", {"id": page_id})
        except ToolCallError as exc:
            if is_not_found(exc):
                return None
            raise
        stored = StoredView(view["id"], view["folder"], int(view["version"]), page_from_view(view))
        self.remember(stored.id, stored.page)
        return stored

    async def put(
        self,
        folder: str,
        page: Page,
        page_id: str | None,
        base_version: int | None,
        conflicts: Sequence[Mapping[str, Any]] = (),
        review: str | None = None,
    ) -> tuple[str, int]:
        """``kb_put_page`` (the whole page, with its conflicts; ``review`` lists the new
        version for a person's review); returns (id, new version)."""
        if self.dry_run:
            target = page_id or f"{folder}/{page_slug(page, self._schema().folder(folder))}"
            previous = self._overlay.get(target)
            version = (previous.version if previous else base_version or 0) + 1
            self._overlay[target] = StoredView(target, folder, version, page)
            self.remember(target, page)
            return target, version
        args: dict[str, Any] = {
            "folder": folder,
            "page": page.to_dict(),
            "base_version": base_version,
        }
        if page_id:
            args["id"] = page_id
        if conflicts and self.accepts("kb_put_page", "conflicts"):
            args["conflicts"] = list(conflicts)
        if review and self.accepts("kb_put_page", "review"):
            args["review"] = review
        note = WRITING_FOR.get()
        if note and self.accepts("kb_put_page", "source"):
            args["source"] = note
        result = await self.call("kb_put_page", args)
        if result.get("held"):
            log.info(
                "%s: %d change(s) wait for a person's review", result["id"], len(result["held"])
            )
        self.remember(result["id"], page)
        return str(result["id"]), int(result["version"])

    def dated(self, folder: str) -> bool:
        return is_dated(self._schema().folder(folder))
