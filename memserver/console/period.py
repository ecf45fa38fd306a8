"""Which dates a knowledge base covers: its pages' first and newest dated entry (in the
caller's folders), or its raw notes' first and last date (``memserver up``'s banner,
before any page is written).

The views use it to open on a period that has something in it (the timeline's last 30
days before the newest entry) and to say which period a knowledge base covers, so that
"what happened last week?" asked long after the notes end is asked "as of" their time.
Read from the same index the tools search, in the caller's folders only.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memserver.db.database import Database

DEFAULT_DAYS = 30
# Both halves use an index on (folder, date); min and max read one row of each.
_SQL = (
    "SELECT min(d), max(d) FROM ("
    " SELECT min(date) AS d FROM timeline_entries WHERE folder = ANY(%(f)s)"
    " UNION ALL SELECT max(date) FROM timeline_entries WHERE folder = ANY(%(f)s)"
    " UNION ALL SELECT min(effective_date) FROM pages WHERE folder = ANY(%(f)s)"
    " UNION ALL SELECT max(effective_date) FROM pages WHERE folder = ANY(%(f)s)) s"
)


@dataclass(frozen=True)
class Period:
    """The first and the newest date of the caller's pages."""

    first: dt.date
    newest: dt.date

    def last_days(self, days: int = DEFAULT_DAYS) -> str:
        """The ``days`` days up to the newest date, as a window ``kb_timeline`` reads."""
        start = self.newest - dt.timedelta(days=days - 1)
        return f"from {start.isoformat()} to {self.newest.isoformat()}"

    @property
    def as_of(self) -> str:
        """The newest date as a reference time: what "last week" means for these notes."""
        return self.newest.isoformat()

    def describe(self) -> str:
        return f"{self.first.isoformat()} to {self.newest.isoformat()}"

    @property
    def month(self) -> str:
        """The newest date's month in words, for a question that names it."""
        return self.newest.strftime("%B %Y")


def notes_period(db: Database) -> Period | None:
    """The dates of the notes in ``source/`` (their document dates), or None."""
    with db.checked("read the dates of the notes") as conn:
        row = conn.execute("SELECT min(doc_date), max(doc_date) FROM source_docs").fetchone()
    if row is None or row[0] is None or row[1] is None:
        return None
    return Period(row[0], row[1])


def dated_period(db: Database, folders: Collection[str]) -> Period | None:
    """The caller's dated period, or None when no page in ``folders`` has a date."""
    with db.checked("read the dates of the pages") as conn:
        row = conn.execute(_SQL, {"f": sorted(folders)}).fetchone()
    if row is None or row[0] is None or row[1] is None:
        return None
    return Period(row[0], row[1])
