"""The review list: facts that changed, that sources disagree on, or that wait for a person.

Rows of the ``conflicts`` table, written with the page write that found them
(``kb_put_page(conflicts=...)``): ``superseded`` (a newer source replaced a value; for
the record), ``unresolved`` (sources disagree, or the ingest agent held a change back
for review: a page in a folder the router did not pick, a decision that would be
superseded or reversed; ``note`` says which) and ``resolved``.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from memserver.db.database import Database


@dataclass(frozen=True)
class Conflict:
    id: int
    page_id: str
    field: str
    old_value: Any
    new_value: Any
    old_source: str | None
    new_source: str | None
    status: str
    note: str | None
    created_at: datetime.datetime

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "page_id": self.page_id,
            "field": self.field,
            "old_value": self.old_value,
            "new_value": self.new_value,
            "old_source": self.old_source,
            "new_source": self.new_source,
            "status": self.status,
            "note": self.note,
            "created_at": self.created_at.isoformat(),
        }


def list_conflicts(db: Database, *, open_only: bool = True, limit: int = 500) -> list[Conflict]:
    """Newest first; only ``unresolved`` ones unless ``open_only`` is False."""
    where = "WHERE status = 'unresolved'" if open_only else ""
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT id, page_id, field, old_value, new_value, old_source, new_source, status,"
            f" note, created_at FROM conflicts {where} ORDER BY created_at DESC, id DESC LIMIT %s",
            (limit,),
        ).fetchall()
    return [Conflict(*row) for row in rows]
