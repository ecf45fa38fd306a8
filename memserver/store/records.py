"""The values the knowledge base service hands out and takes: a stored page, a page in a
listing, a put's result, a version, a conflict record, one prepared guarded write; and
page ids (``folder/slug``), read one way, with the one not-found error for a page that is
missing or outside the caller's scope.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memserver.errors import NotFoundError, UserError
from memserver.index.indexer import PreparedPage, Vectors
from memserver.kb.layout import check_name
from memserver.kb.page import Page

# superseded: a newer fact replaced an older one; unresolved: sources disagree; resolved:
# a later source states the value, settling the field's open conflicts
CONFLICT_STATUSES = ("superseded", "unresolved", "resolved")


@dataclass(frozen=True)
class StoredPage:
    id: str  # "folder/slug"
    folder: str
    slug: str
    version: int
    page: Page
    markdown: str
    effective_date: datetime.date | None
    updated_at: datetime.datetime


@dataclass(frozen=True)
class PageSummary:
    id: str
    folder: str
    slug: str
    title: str
    type: str
    effective_date: datetime.date | None
    version: int
    updated_at: datetime.datetime


@dataclass(frozen=True)
class PutResult:
    id: str
    version: int
    created: bool
    degraded: tuple[str, ...]
    path: str


@dataclass(frozen=True)
class VersionInfo:
    version: int
    created_at: datetime.datetime
    written_by: str
    content_hash: str


@dataclass(frozen=True)
class ConflictRecord:
    """A fact that changed (``superseded``), that two sources disagree on (``unresolved``),
    or a later source's value that settles the field's open conflicts (``resolved``)."""

    field: str
    old_value: Any = None
    new_value: Any = None
    old_source: str | None = None
    new_source: str | None = None
    status: str = "unresolved"
    note: str | None = None  # why, for the review list (``memserver conflicts``)

    @classmethod
    def of(cls, value: ConflictRecord | Mapping[str, Any]) -> ConflictRecord:
        if isinstance(value, ConflictRecord):
            record = value
        else:
            known = {f.name for f in dataclasses.fields(cls)}
            unknown = sorted(set(value) - known)
            if unknown:
                raise UserError(
                    f"unknown conflict keys: {', '.join(unknown)}",
                    f"a conflict has: {', '.join(sorted(known))}",
                )
            if not value.get("field"):
                raise UserError("a conflict needs the field it is about", "set field")
            record = cls(**dict(value))
        if record.status not in CONFLICT_STATUSES:
            raise UserError(
                f"conflict status {record.status!r} is not one of {', '.join(CONFLICT_STATUSES)}",
                "use superseded (a newer fact replaced it), unresolved (sources disagree) or "
                "resolved (a later source settles the field's open conflict)",
            )
        return record


@dataclass(frozen=True)
class PageWrite:
    """One guarded page write, everything computed before the page's lock is taken.

    ``prepared`` holds the rendered markdown and the index rows; ``path`` is where the
    file goes; ``base_version`` is the version the caller read (None = create);
    ``vectors`` are None when embedding failed (the chunks stay stale); ``degraded``
    is copied into the result; ``review`` flags the new version for review.
    """

    prepared: PreparedPage
    path: Path
    base_version: int | None
    vectors: Vectors | None
    written_by: str
    note: str | None
    conflicts: tuple[ConflictRecord, ...]
    degraded: tuple[str, ...]
    review: str | None = None  # why a person should review this change (None: no review)


def split_id(page_id: str) -> tuple[str, str]:
    """``"folder/slug"`` -> ``("folder", "slug")``; UserError for anything else."""
    folder, sep, slug = str(page_id).partition("/")
    if not sep or not folder or not slug:
        raise UserError(
            f"{page_id!r} is not a page id", "page ids look like folder/slug, e.g. people/alice"
        )
    return check_name(folder, "folder"), check_name(slug, "slug")


def not_found(page_id: str) -> NotFoundError:
    """The one error for a page that is missing or outside the caller's scope."""
    return NotFoundError(
        f"no page {page_id!r}", "check the id with list_pages or a search; ids are folder/slug"
    )


def visible_id(page_id: str, folders: Collection[str] | None) -> tuple[str, str]:
    """``(folder, slug)`` of a page id the caller may read; NotFoundError (the same as for
    a missing page) when its folder is outside ``folders`` (None = every folder)."""
    folder, slug = split_id(page_id)
    if folders is not None and folder not in folders:
        raise not_found(page_id)
    return folder, slug
