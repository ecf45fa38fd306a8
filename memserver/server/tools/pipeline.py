"""Pipeline tools: the ingest agent's view of ``source/`` and the manifest.

All of them need a write token that includes ``source`` (or ``*``). Every scan
(``source_pending``) also brings the source index up to date, so a new note is
searchable with ``include_sources`` as soon as the agent looks for work, and a removed
one leaves it (a note of more than 256 KB is indexed in the background, and the call
says so: ``memserver.server.source_indexing``). The calls feed ``Services.ingest`` (``memserver.server.ingest_progress``):
whether a run is going on, and the notes it reads and finishes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from memserver.errors import MemoryError_, ToolErrorKind
from memserver.kb.manifest import Manifest, SourceEntry, Status
from memserver.server.tools.base import (
    MAX_OFFSET,
    Access,
    MemoryToolError,
    Services,
    current,
    tool,
)

logger = logging.getLogger(__name__)


class SourceInfo(TypedDict):
    path: str
    status: str
    hash: str
    doc_date: str
    size: int
    error: str | None
    pages: list[str]


class PendingResult(TypedDict):
    sources: list[SourceInfo]
    total: int
    counts: dict[str, int]
    indexing: bool
    failed: list[SourceInfo]


class SourceContent(TypedDict):
    path: str
    content: str
    hash: str
    doc_date: str
    status: str
    size: int
    redacted: bool
    offset: int
    total_chars: int
    next_offset: int | None


# Characters one source_read returns at most; a longer note is read in pages.
READ_PAGE_CHARS = 100_000


class MarkResult(TypedDict):
    path: str
    status: str
    pages: list[str]
    error: str | None
    dropped_count: int


def source_info(entry: SourceEntry) -> SourceInfo:
    return {
        "path": entry.path,
        "status": str(entry.status),
        "hash": entry.hash,
        "doc_date": entry.doc_date.isoformat(),
        "size": entry.size,
        "error": entry.error,
        "pages": list(entry.pages),
    }


def status_counts(entries: Iterable[SourceEntry]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in entries:
        counts[str(entry.status)] = counts.get(str(entry.status), 0) + 1
    return counts


def index_scanned(services: Services, entries: Sequence[SourceEntry]) -> None:
    """The source index follows the scan (keyword at once, vectors may follow). A failure
    is logged, not raised: the listing still serves, and the next scan or a reindex
    catches up."""
    try:
        services.kb().index_sources(entries)
    except MemoryError_ as exc:
        logger.warning("could not index the scanned sources: %s", exc)


@tool(access=Access.PIPELINE, title="List sources to ingest", idempotent=True)
def source_pending(
    limit: Annotated[int, Field(ge=1, le=1000, description="How many to return.")] = 50,
) -> PendingResult:
    """List raw source documents that still need ingesting, oldest document first.

    Rescans source/ first, so new and edited files appear. Returns sources whose
    status is "pending" (never ingested) or "updated" (changed since ingestion),
    ordered by document date, oldest first: ingest them in this order so timelines
    and current state are built chronologically. For each source, call source_read,
    write the pages, then source_mark. `total` counts all waiting sources;
    `counts` gives every status in the manifest. `indexing` is true while a large
    note is being indexed for search in the background (reading it works at once).
    `failed` lists the sources that could not be taken (a file that does not convert,
    one too large), each with its `error`: they wait for a change to the file.
    """
    services = current().services
    with services.pipeline_lock:
        entries = list(services.manifest().scan().entries)
    indexing = services.sources.follow(entries, lambda scan: index_scanned(services, scan))
    pending = Manifest.waiting(entries)
    counts = status_counts(entries)
    failed = [e for e in entries if e.status is Status.FAILED]
    services.ingest.listed(counts, {e.path: e.error or "" for e in failed})
    return {
        "sources": [source_info(e) for e in pending[:limit]],
        "total": len(pending),
        "counts": counts,
        "indexing": indexing,
        "failed": [source_info(e) for e in failed[:limit]],
    }


@tool(access=Access.PIPELINE, title="Read a source document")
def source_read(
    path: Annotated[
        str, Field(description="Source path relative to source/, as listed by source_pending.")
    ],
    offset: Annotated[
        int,
        Field(
            ge=0,
            le=MAX_OFFSET,
            description="Character to start at; pass next_offset to read on.",
        ),
    ] = 0,
    limit: Annotated[
        int,
        Field(ge=1, le=READ_PAGE_CHARS, description="Characters to return at most."),
    ] = READ_PAGE_CHARS,
) -> SourceContent:
    """Read one raw source document: its text, content hash and document date.

    Private spans (<private>...</private>) are replaced by "[redacted]"; never try to
    reconstruct them. Keep the returned `hash`: pass it to source_mark when you mark
    the source ingested, so an edit made while you were working is not lost. Use
    `doc_date` to resolve relative dates in the text ("yesterday", "last week").
    A long note comes in pages: while `next_offset` is not null, call again with
    offset=next_offset and append the text; `total_chars` is the whole length.
    """
    from memserver.kb.redact import redact_private

    services = current().services
    with services.pipeline_lock:
        text, digest, entry = services.manifest().read_source(path)
    services.ingest.reading(entry.path)
    content = redact_private(text)
    total = len(content)
    if offset > total:
        raise MemoryToolError(
            f"offset={offset} is past the end of {entry.path} ({total} characters); "
            f"use an offset from 0 to {total}",
            ToolErrorKind.ARGUMENTS,
        )
    end = min(total, offset + limit)
    return {
        "path": entry.path,
        "content": content[offset:end],
        "hash": digest,
        "doc_date": entry.doc_date.isoformat(),
        "status": str(entry.status),
        "size": entry.size,
        "redacted": content != text,
        "offset": offset,
        "total_chars": total,
        "next_offset": end if end < total else None,
    }


@tool(
    access=Access.PIPELINE,
    title="Record the result of ingesting a source",
    aliases={
        "outcome": "status",
        "state": "status",
        "result": "status",
        "sha256": "hash",
        "content_hash": "hash",
        "hash_read": "hash",
        "page_ids": "pages",
        "pages_written": "pages",
        "written": "pages",
        "message": "error",
        "reason": "error",
    },
)
def source_mark(
    path: Annotated[str, Field(description="Source path relative to source/.")],
    status: Annotated[
        Literal["ingested", "failed", "reset"],
        Field(
            description='"ingested" after writing its pages, "failed" with the error, '
            'or "reset" to queue it again.'
        ),
    ],
    hash: Annotated[
        str | None,
        Field(description="For ingested: the hash source_read returned."),
    ] = None,
    pages: Annotated[
        list[str] | None,
        Field(description='For ingested: ids ("folder/slug") of the pages written.'),
    ] = None,
    error: Annotated[str | None, Field(description="For failed: what went wrong.")] = None,
    extractor: Annotated[
        Literal["llm", "rules"] | None,
        Field(
            description='For ingested: what extracted the pages, "llm" (default) or '
            '"rules" (the deterministic extractor, no model).'
        ),
    ] = None,
    dropped: Annotated[
        list[str] | None,
        Field(
            description="For ingested: what you left out because the schema has no "
            "place for it (a folder or field it lacks), one line each; counted in the "
            "ledger."
        ),
    ] = None,
    degraded: Annotated[
        list[str] | None,
        Field(
            description="For ingested: why the configured model's work was replaced, "
            'e.g. ["llm_unusable"] when the rules extractor read the note instead.'
        ),
    ] = None,
    reasons: Annotated[
        list[str] | None,
        Field(
            description="For ingested: why the note became the pages it did, one line "
            'each, e.g. "no page of its own: an email, its people attended nothing".'
        ),
    ] = None,
) -> MarkResult:
    """Record what happened to a source after you processed it.

    - status="ingested": pass `hash` exactly as source_read returned it and `pages`,
      the ids of every page you wrote or updated. If the file changed since you read
      it, it stays "updated" and will come back from source_pending.
    - status="failed": pass `error`, a short description; the source is retried
      when the file changes or after a reset.
    - status="reset": queue the source for ingestion again.
    """
    services = current().services
    if status == "ingested" and not hash:
        raise MemoryToolError(
            "status='ingested' needs the hash that source_read returned for this path; "
            "call source_mark again with hash='<that hash>'",
            ToolErrorKind.ARGUMENTS,
        )
    if status == "failed" and not (error or "").strip():
        raise MemoryToolError(
            "status='failed' needs error='<what went wrong>'; call source_mark again with it",
            ToolErrorKind.ARGUMENTS,
        )
    with services.pipeline_lock:
        manifest = services.manifest()
        if status == "ingested":
            assert hash is not None
            entry = manifest.mark_ingested(
                path,
                hash,
                [p.strip() for p in pages or []],
                extractor=extractor or "llm",
                dropped=[str(d) for d in dropped or []],
                degraded=[str(d)[:80] for d in (degraded or [])[:10]],
                reasons=[str(r) for r in reasons or []],
            )
        elif status == "failed":
            entry = manifest.mark_failed(path, (error or "").strip())
        else:
            entry = manifest.reset(path)
        counts = status_counts(manifest.entries())
    services.ingest.finished(
        entry.path, str(entry.status), counts, pages=entry.pages, error=entry.error
    )
    return {
        "path": entry.path,
        "status": str(entry.status),
        "pages": list(entry.pages),
        "error": entry.error,
        "dropped_count": entry.dropped_count,
    }


class ClaimResult(TypedDict):
    path: str
    claimed: bool
    holder: str
    status: str
    reason: str | None


@tool(access=Access.PIPELINE, title="Claim a source before ingesting it")
def source_claim(
    path: Annotated[str, Field(description="Source path relative to source/.")],
    holder: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            description="Who you are: the same string for every claim of your run.",
        ),
    ],
    pending_only: Annotated[
        bool,
        Field(description="Refuse a source that is no longer pending or updated (default)."),
    ] = True,
    lease_seconds: Annotated[
        int, Field(ge=10, le=24 * 3600, description="How long the claim lasts unless renewed.")
    ] = 1800,
) -> ClaimResult:
    """Take the lease on one source before source_read, so that two ingest agents (on this
    memory server or another one over the same database) never work on the same note.

    `claimed` false: another agent holds it (`holder`), or it was ingested since you
    listed it; skip it. Call source_release when done (ingested or failed); a lease you
    do not release lapses after `lease_seconds`. Claiming again renews it.
    """
    from memserver.store.leases import SourceLeases

    services = current().services
    rel = services.paths.source_rel(path)
    leases = SourceLeases(services.kb().db)
    owner = leases.claim(rel, holder, lease_seconds)
    with services.pipeline_lock:
        entry = services.manifest().get(rel)  # after the lease: the last holder has marked it
    if owner != holder:
        reason = f"another agent ({owner}) is ingesting it"
    elif pending_only and entry.status not in (Status.PENDING, Status.UPDATED):
        leases.release(rel, holder)
        reason = f"it is {entry.status} now"
    else:
        reason = None
    return {
        "path": rel,
        "claimed": reason is None,
        "holder": owner,
        "status": str(entry.status),
        "reason": reason,
    }


class ReleaseResult(TypedDict):
    path: str
    released: bool


@tool(access=Access.PIPELINE, title="Release a claimed source", idempotent=True)
def source_release(
    path: Annotated[str, Field(description="Source path relative to source/.")],
    holder: Annotated[
        str, Field(min_length=1, max_length=200, description="The holder you claimed it as.")
    ],
) -> ReleaseResult:
    """Give up your lease on a source (after source_mark), so another agent may take it."""
    from memserver.store.leases import SourceLeases

    services = current().services
    rel = services.paths.source_rel(path)
    return {"path": rel, "released": SourceLeases(services.kb().db).release(rel, holder)}
