"""What the keyword arms match, and the SQL pieces every arm shares: the question's terms
as ``websearch_to_tsquery`` expressions in ever looser stages (:class:`TextQuery`,
:func:`staged`), the window condition and best-row-per-key.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from memserver.kb.abbreviations import spelled_in, stands_for
from memserver.kb.glossary import other_language
from memserver.kb.words import mn_stems
from memserver.search.intent import Intent

Conn = psycopg.Connection[Any]


@dataclass(frozen=True)
class TextQuery:
    """What the keyword arms search: the question's words, each a ``websearch_to_tsquery``
    (an identifier such as "INV-2026-044" is one quoted phrase), a Mongolian word also
    matching its stem as a prefix ("Трейдтэй" -> ``трейд:*``), a business word also its
    other language's as prefixes ("price" -> ``үнэ:* | үний:*``, :mod:`memserver.kb.glossary`),
    a name written in Cyrillic the Latin title words that sound like it ("Глобекстэй" ->
    ``globex:*``, :attr:`memserver.search.intent.Intent.across`), an abbreviation the
    words it stands for ("coo" -> ``chief:* & operating:* & officer:*``) and a word of a
    phrase the question spells out its abbreviation ("chief operating officer": each
    word or ``coo``, :mod:`memserver.kb.abbreviations`). A prefix of several words
    matches a text holding each.
    ``naming`` holds the
    positions of the terms that name something (identifiers and words written as names,
    :attr:`memserver.search.intent.Intent.names`)."""

    terms: tuple[tuple[str, tuple[str, ...]], ...]  # (websearch text, prefixes)
    naming: frozenset[int] = frozenset()

    @classmethod
    def of(cls, intent: Intent) -> TextQuery:
        terms: list[tuple[str, tuple[str, ...]]] = []
        naming: set[int] = set()
        across = dict(intent.across)
        shorts = spelled_in(intent.terms)
        for term in intent.terms:
            stems = [p for p in mn_stems(term) if p.isalnum()]
            spelled = tuple(" ".join(phrase) for phrase in stands_for(term))
            if term in intent.names or term in across:
                naming.add(len(terms))
                terms.append((term, (*stems[-1:], *across.get(term, ()), *spelled)))
                continue
            text = " or ".join([term, *shorts.get(term, ())])
            terms.append((text, (*stems[-1:], *other_language(term), *spelled)))
        naming.update(range(len(terms), len(terms) + len(intent.identifiers)))
        terms.extend((f'"{ident}"', ()) for ident in intent.identifiers)
        return cls(tuple(terms), frozenset(naming))

    @property
    def empty(self) -> bool:
        return not self.terms

    def _term(self, i: int) -> str:
        sql = f"websearch_to_tsquery('simple', %(kw_t{i})s)"
        if self.terms[i][1]:
            sql = f"({sql} || to_tsquery('simple', %(kw_p{i})s))"
        return sql

    def any_sql(self) -> str:
        """Any of the words (ranking, timeline matching)."""
        return " || ".join(self._term(i) for i in range(len(self.terms))) or "''::tsquery"

    def all_sql(self) -> str:
        return " && ".join(self._term(i) for i in range(len(self.terms))) or "''::tsquery"

    def pairs_sql(self) -> str:
        """At least two of the words."""
        n = len(self.terms)
        if n <= 2:
            return self.all_sql()
        pairs = [f"({self._term(i)} && {self._term(j)})" for i in range(n) for j in range(i + 1, n)]
        return " || ".join(pairs)

    def stages(self) -> list[tuple[str, str]]:
        """Ever looser matches, tried in turn until enough are found: all the words, at
        least two (three or more words), any (at most three words)."""
        n = len(self.terms)
        out = [("all_terms", self.all_sql())]
        if n >= 3:
            out.append(("two_terms", self.pairs_sql()))
        if 2 <= n <= 3:
            out.append(("some_terms", self.any_sql()))
        return out

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, (text, prefixes) in enumerate(self.terms):
            out[f"kw_t{i}"] = text
            if prefixes:
                out[f"kw_p{i}"] = " | ".join(
                    "(" + " & ".join(f"{word}:*" for word in prefix.split()) + ")"
                    for prefix in prefixes
                )
        return out


def window_sql(start: dt.date | None, end: dt.date | None, column: str) -> str:
    return (
        f" AND (%(start)s::date IS NULL OR {column} >= %(start)s)"
        f" AND (%(end)s::date IS NULL OR {column} < %(end)s)"
    )


def best_per_key(rows: Sequence[tuple[Any, ...]], limit: int) -> list[tuple[Any, ...]]:
    """Rows are (key, ...) best first; keep the first row of each key."""
    seen: set[Any] = set()
    out = []
    for row in rows:
        if row[0] in seen:
            continue
        seen.add(row[0])
        out.append(row)
        if len(out) >= limit:
            break
    return out


def staged(
    conn: Conn, query: TextQuery, build: Callable[[str], str], params: dict[str, Any], limit: int
) -> list[tuple[str, tuple[Any, ...]]]:
    """Rows of ever looser stages (best first within each) until ``limit`` keys are found.

    ``build(match_sql)`` returns the SQL for one stage; its rows start with the key.
    Strict stages are cheap (few rows to rank); a loose stage over common words is the
    expensive one, so it runs only when the strict ones found too little.
    """
    out: list[tuple[str, tuple[Any, ...]]] = []
    seen: set[Any] = set()
    for detail, match in query.stages():
        for row in conn.execute(build(match), params).fetchall():
            if row[0] not in seen:
                seen.add(row[0])
                out.append((detail, row))
        if len(seen) >= limit:
            break
    return out[:limit]
