"""Reading the typed graph: a page's neighbours, and the pages wired to an entity.

Scope: an edge is returned only when BOTH ends are in the caller's folders
(``folders`` None = all), so an out-of-scope id never leaks through a link; a start
page out of scope is reported exactly like a missing one (NotFoundError). Only
resolved edges (``to_id`` set) are part of the graph; the same (from, verb, to) written
several ways (a field and a wikilink) is one edge with several ``origins``.

Every query goes through an index: ``links_from`` (from_id, verb), ``links_to``
(to_id, verb) and the pages primary key.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg

from memserver.db.database import Database
from memserver.errors import NotFoundError, UserError

DIRECTIONS = ("out", "in", "both")
MAX_DEPTH = 2
# More edges than this at one depth are cut (hub pages such as a company every meeting
# is about); ``neighbors`` then returns exactly MAX_EDGES edges for that depth.
MAX_EDGES = 500

Conn = psycopg.Connection[Any]


@dataclass(frozen=True)
class Edge:
    from_id: str
    verb: str
    to_id: str
    from_title: str
    to_title: str
    depth: int  # 1 = touches the start page, 2 = one page further
    origins: tuple[str, ...] = ()  # field, prose, wikilink, mdlink

    def to_dict(self) -> dict[str, Any]:
        return {
            "from_id": self.from_id,
            "verb": self.verb,
            "to_id": self.to_id,
            "from_title": self.from_title,
            "to_title": self.to_title,
            "depth": self.depth,
            "origins": list(self.origins),
        }


@contextmanager
def connection(conn_or_db: Database | Conn) -> Iterator[Conn]:
    """A connection from a Database, or the caller's own connection as it is."""
    if isinstance(conn_or_db, Database):
        with conn_or_db.connection() as conn:
            yield conn
    else:
        yield conn_or_db


def _scope(folders: Collection[str] | None) -> list[str] | None:
    return None if folders is None else sorted(folders)


def check_direction(direction: str) -> str:
    value = (direction or "both").strip().lower()
    aliases = {"outgoing": "out", "incoming": "in", "any": "both", "all": "both"}
    value = aliases.get(value, value)
    if value not in DIRECTIONS:
        raise UserError(
            f"direction {direction!r} is not one of in, out, both", "use in, out or both"
        )
    return value


def check_depth(depth: int) -> int:
    if not 1 <= int(depth) <= MAX_DEPTH:
        raise UserError(f"depth {depth} is out of range", f"use a depth from 1 to {MAX_DEPTH}")
    return int(depth)


def _edges_sql(direction: str) -> str:
    """Edges touching any of %(nodes)s, both ends in scope, grouped over origins."""
    touch = {
        "out": "l.from_id = ANY(%(nodes)s)",
        "in": "l.to_id = ANY(%(nodes)s)",
    }
    arms = [touch[d] for d in (("out", "in") if direction == "both" else (direction,))]
    selects = [
        "SELECT l.from_id, l.verb, l.to_id, f.title, t.title, l.origin"
        " FROM links l JOIN pages f ON f.id = l.from_id JOIN pages t ON t.id = l.to_id"
        f" WHERE {arm} AND l.to_id IS NOT NULL"
        "  AND (%(verbs)s::text[] IS NULL OR l.verb = ANY(%(verbs)s))"
        "  AND (%(scope)s::text[] IS NULL"
        "       OR (f.folder = ANY(%(scope)s) AND t.folder = ANY(%(scope)s)))"
        for arm in arms
    ]
    union = " UNION ".join(selects)
    return (
        "SELECT from_id, verb, to_id, f_title, t_title, array_agg(DISTINCT origin ORDER BY origin)"
        f" FROM ({union}) AS e(from_id, verb, to_id, f_title, t_title, origin)"
        " GROUP BY from_id, verb, to_id, f_title, t_title"
        " ORDER BY verb, from_id, to_id LIMIT %(limit)s"
    )


def require_page(conn: Conn, page_id: str, folders: Collection[str] | None) -> str:
    """The page's title; NotFoundError when it is missing or out of scope (same message)."""
    row = conn.execute("SELECT folder, title FROM pages WHERE id = %s", (page_id,)).fetchone()
    if row is None or (folders is not None and row[0] not in folders):
        raise NotFoundError(
            f"no page {page_id!r}",
            "check the id with kb_list_pages or kb_resolve; ids look like 'folder/slug'",
        )
    return str(row[1])


def neighbors(
    conn_or_db: Database | Conn,
    page_id: str,
    folders: Collection[str] | None,
    verbs: Sequence[str] | None = None,
    direction: str = "both",
    depth: int = 1,
) -> list[Edge]:
    """Edges around ``page_id`` up to ``depth`` (1 or 2) hops, both ends in ``folders``.

    ``direction``: ``out`` (edges from the page), ``in`` (edges to it) or ``both``; at
    depth 2 the same direction is followed from each neighbour. ``verbs`` keeps only
    those edge types. Sorted by depth, verb, from_id, to_id; each edge listed once, at
    the depth it is first reached.
    """
    direction = check_direction(direction)
    depth = check_depth(depth)
    verb_list = sorted({v.strip() for v in verbs if v.strip()}) if verbs else None
    out: list[Edge] = []
    seen: set[tuple[str, str, str]] = set()
    with connection(conn_or_db) as conn:
        require_page(conn, page_id, folders)
        visited = {page_id}
        frontier = [page_id]
        query = _edges_sql(direction)
        for level in range(1, depth + 1):
            if not frontier:
                break
            rows = conn.execute(
                query,
                {
                    "nodes": frontier,
                    "verbs": verb_list,
                    "scope": _scope(folders),
                    "limit": MAX_EDGES,
                },
            ).fetchall()
            following: list[str] = []
            for from_id, verb, to_id, from_title, to_title, origins in rows:
                key = (from_id, verb, to_id)
                if key in seen:
                    continue
                seen.add(key)
                out.append(Edge(from_id, verb, to_id, from_title, to_title, level, tuple(origins)))
                for end in (from_id, to_id):
                    if end not in visited:
                        visited.add(end)
                        following.append(end)
            frontier = following
    return out


def entity_pages(
    db: Database | Conn,
    entity_id: str,
    into_folder: str,
    verbs: Sequence[str] | None = None,
    folders: Collection[str] | None = None,
    *,
    direction: str = "both",
    start: dt.date | None = None,
    end: dt.date | None = None,
    newest_first: bool = True,
    limit: int | None = None,
) -> list[str]:
    """Ids of pages in ``into_folder`` wired to ``entity_id`` in either direction.

    For the search graph arm ("latest meeting with Alice": the meetings with an edge to
    or from Alice). ``direction``: ``in`` keeps pages with an edge *to* the entity
    ("who reports to Alice": verbs=["reports_to"], direction="in"), ``out`` pages it
    points to, ``both`` either. Empty when the entity or the folder is out of ``folders``.
    ``start``/``end`` (end exclusive) filter on the pages' effective date; pages are
    ordered by effective date (newest first unless ``newest_first`` is False, undated
    last), then id.
    """
    if folders is not None and (into_folder not in folders):
        return []
    entity_folder = entity_id.partition("/")[0]
    if folders is not None and entity_folder not in folders:
        return []
    direction = check_direction(direction)
    verb_list = sorted(set(verbs)) if verbs else None
    order = "DESC" if newest_first else "ASC"
    arms = []
    if direction in ("in", "both"):
        arms.append(
            "SELECT from_id AS id FROM links WHERE to_id = %(entity)s"
            " AND from_folder = %(folder)s"
            " AND (%(verbs)s::text[] IS NULL OR verb = ANY(%(verbs)s))"
        )
    if direction in ("out", "both"):
        arms.append(
            "SELECT to_id AS id FROM links WHERE from_id = %(entity)s AND to_id IS NOT NULL"
            " AND (%(verbs)s::text[] IS NULL OR verb = ANY(%(verbs)s))"
        )
    sql = (
        f"SELECT p.id FROM pages p JOIN ({' UNION '.join(arms)}) AS w ON w.id = p.id"
        " WHERE p.folder = %(folder)s AND p.id <> %(entity)s"
        "  AND (%(start)s::date IS NULL OR p.effective_date >= %(start)s)"
        "  AND (%(end)s::date IS NULL OR p.effective_date < %(end)s)"
        f" ORDER BY p.effective_date {order} NULLS LAST, p.id"
        " LIMIT %(limit)s"
    )
    with connection(db) as conn:
        rows = conn.execute(
            sql,
            {
                "entity": entity_id,
                "folder": into_folder,
                "verbs": verb_list,
                "start": start,
                "end": end,
                "limit": limit,
            },
        ).fetchall()
    return [r[0] for r in rows]
