"""Raw sources as whole notes: the note-level keyword arm, and a window that also matches
the dates a note mentions (the rows of ``memserver.index.source_notes``).

* :func:`note_keyword` ranks whole notes by BM25 (Okapi, k1 1.2, b 0.75, idf
  ``ln(1 + (N - df + 0.5) / (df + 0.5))``) over their lightly stemmed words, date and
  speakers included: a note that answers with several moderately matching turns, which
  the sentence arms score by its best sentence alone. A note's vote in the fusion is its
  score over the best note's (``Hit.share``), times how much of the question's words the
  notes use at all (``SOURCES.gate_power``).
* :func:`source_window_sql`: a note is inside a window when its date is, or when one of
  its sentences mentions a date inside it (a mention no longer than the window, or than a
  week: "this year" says little about "on March 3").

The dates a sentence mentions are read by :func:`memserver.timeparse.mentions.mention_reader`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from memserver.index.source_notes import light_stem, words_of
from memserver.kb.words import STOPWORDS, mn_stems
from memserver.search.fusion import Hit
from memserver.search.settings import ARMS, SOURCES
from memserver.search.text_query import Conn
from memserver.search.types import SOURCE_PREFIX
from memserver.timeparse.mentions import MENTION_MAX_DAYS


def window_params(start: dt.date | None, end: dt.date | None) -> dict[str, Any]:
    """The parameters :func:`source_window_sql` reads."""
    days = (end - start).days if start is not None and end is not None else MENTION_MAX_DAYS
    return {"start": start, "end": end, "mention_days": max(SOURCES.mention_min_days, days)}


def source_window_sql(start: dt.date | None, end: dt.date | None, path: str, date: str) -> str:
    """`` AND`` a source (its ``path`` and ``date`` columns) is inside the window: dated in
    it, or mentioning a date in it. Empty without a window."""
    if start is None and end is None:
        return ""
    return (
        f" AND (((%(start)s::date IS NULL OR {date} >= %(start)s)"
        f" AND (%(end)s::date IS NULL OR {date} < %(end)s))"
        f" OR EXISTS (SELECT 1 FROM source_mentions sm WHERE sm.path = {path}"
        " AND (%(start)s::date IS NULL OR sm.end_date > %(start)s)"
        " AND (%(end)s::date IS NULL OR sm.start_date < %(end)s)"
        " AND sm.end_date - sm.start_date <= %(mention_days)s))"
    )


def mentioned_in_window(
    conn: Conn, paths: Sequence[str], start: dt.date | None, end: dt.date | None
) -> set[str]:
    """Those of ``paths`` that mention a date inside the window."""
    if not paths or (start is None and end is None):
        return set()
    rows = conn.execute(
        "SELECT path FROM source_docs d WHERE path = ANY(%(paths)s)"
        + source_window_sql(start, end, "d.path", "NULL::date"),
        {"paths": list(paths), **window_params(start, end)},
    ).fetchall()
    return {p for (p,) in rows}


def question_terms(question: str) -> tuple[list[str], list[str]]:
    """The words of a question the note arm looks up (stop words out), and the Mongolian
    stems matched as prefixes ("Трейдтэй" -> ``трейд%``)."""
    raw = [w for w in dict.fromkeys(words_of(question)) if w not in STOPWORDS]
    prefixes = [f"{s}%" for w in raw for s in mn_stems(w)[-1:] if s != w and s.isalnum()]
    return list(dict.fromkeys(light_stem(w) for w in raw)), prefixes


def note_keyword(
    conn: Conn,
    question: str,
    *,
    start: dt.date | None = None,
    end: dt.date | None = None,
    limit: int = ARMS.pool,
    embed: Callable[[str], np.ndarray | None] | None = None,
) -> list[Hit]:
    """Whole notes ranked by BM25 over their words, best first (inside the window when
    there is one, :func:`source_window_sql`). With an ``embed`` (a query's vector, or
    None), the gate tells a word that carries the question's meaning
    from one it could do without (:func:`_incidental`)."""
    words, prefixes = question_terms(question)
    if not words:
        return []
    like = "".join(" OR term LIKE %(p" + str(i) + ")s" for i in range(len(prefixes)))
    params: dict[str, Any] = {
        "words": words,
        "k1": SOURCES.k1,
        "b": SOURCES.b,
        "pool": limit,
        **{f"p{i}": p for i, p in enumerate(prefixes)},
        **window_params(start, end),
    }
    sql = (
        "WITH q AS (SELECT DISTINCT term FROM source_terms WHERE term = ANY(%(words)s)"
        f"{like}),"
        " df AS (SELECT t.term, count(*)::float8 AS df FROM source_terms t"
        " JOIN q ON q.term = t.term GROUP BY t.term),"
        " st AS (SELECT count(*)::float8 AS n, coalesce(avg(words), 1)::float8 AS avgdl"
        " FROM source_docs WHERE words IS NOT NULL)"
        " SELECT t.path, d.doc_date, sum(ln(1 + (st.n - df.df + 0.5) / (df.df + 0.5))"
        " * t.tf * (%(k1)s + 1) / (t.tf + %(k1)s * (1 - %(b)s + %(b)s * d.words / st.avgdl))),"
        " array_agg(t.term), max(st.n)"
        " FROM source_terms t JOIN df ON df.term = t.term"
        " JOIN source_docs d ON d.path = t.path CROSS JOIN st WHERE d.words IS NOT NULL"
        + source_window_sql(start, end, "d.path", "d.doc_date")
        + " GROUP BY t.path, d.doc_date ORDER BY 3 DESC, t.path LIMIT %(pool)s"
    )
    rows = conn.execute(sql, params).fetchall()
    if not rows:
        return []
    top = max(float(r[2]) for r in rows)
    held = [set(r[3]) for r in rows]
    gate = _held_share(
        conn, words, prefixes, held, float(rows[0][4]), question=question, embed=embed
    )
    return [
        Hit(
            SOURCE_PREFIX + path,
            "source",
            float(score),
            None,
            day,
            "note",
            share=(float(score) / top if top > 0 else 1.0) * gate**SOURCES.gate_power,
        )
        for path, day, score, _, _ in rows
    ]


def _held_share(
    conn: Conn,
    words: Sequence[str],
    prefixes: Sequence[str],
    held: Sequence[set[str]],
    n: float,
    *,
    question: str = "",
    embed: Callable[[str], np.ndarray | None] | None = None,
) -> float:
    """The largest part of the question's rarity (summed idf, a word no note holds at its
    rarest) that one note holds: low when the question is put in words the notes do not
    use. A word no note holds that the question's meaning does without
    (:func:`_incidental`) counts no rarer than the rarest word of the question the notes
    do hold: the notes never use that word, they do not say the question in other
    words."""
    df = dict(
        conn.execute(
            "SELECT term, count(*) FROM source_terms WHERE term = ANY(%s) GROUP BY term",
            (list(words),),
        ).fetchall()
    )
    stems = {w: p[:-1] for w in words for p in prefixes if w.startswith(p[:-1])}

    def holds(w: str, terms: set[str]) -> bool:
        return w in terms or (w in stems and any(t.startswith(stems[w]) for t in terms))

    missing = [w for w in words if df.get(w, 0) == 0 and not any(holds(w, t) for t in held)]
    aside = _incidental(question, words, missing, embed) if missing else set()
    idf = {w: math.log(1 + (n - df.get(w, 0) + 0.5) / (df.get(w, 0) + 0.5)) for w in words}
    rarest_held = max((idf[w] for w in words if w not in missing), default=0.0)
    idf |= {w: min(idf[w], rarest_held) for w in aside}
    total = sum(idf.values()) or 1.0

    def share(terms: set[str]) -> float:
        return sum(idf[w] for w in words if holds(w, terms)) / total

    return max((share(terms) for terms in held), default=0.0)


def _incidental(
    question: str,
    words: Sequence[str],
    missing: Sequence[str],
    embed: Callable[[str], np.ndarray | None] | None,
) -> set[str]:
    """Those of the ``missing`` words the question's meaning does without: the question's
    vector moves less when the word is left out than it does, at the median, when one of
    the words the notes hold is left out, and no more than when one of its stop words
    is. Empty without vectors to compare, or without a stop word to compare with."""
    raw = words_of(question)
    stops = [r for r in dict.fromkeys(raw) if r in STOPWORDS]
    if embed is None or len(words) < 2 or not stops:
        return set()
    if 1 + len(words) + len(stops) > SOURCES.incidental_vectors:
        return set()  # the embedder's work for one question stays bounded
    vector = embed(question)
    if vector is None:
        return set()

    def moved(forms: set[str]) -> float | None:
        if not forms:
            return None
        pattern = r"\b(" + "|".join(re.escape(f) for f in forms) + r")\b"
        rest = re.sub(pattern, " ", question, flags=re.IGNORECASE).strip()
        other = embed(rest) if rest else None
        return None if other is None else 1.0 - float(np.dot(vector, other))

    moves = {w: moved({r for r in raw if light_stem(r) == w}) for w in words}
    plain = [moved({r}) for r in stops]
    kept = [m for w, m in moves.items() if w not in missing and m is not None]
    if not kept or None in plain:
        return set()
    below = min(statistics.median(kept), max(m for m in plain if m is not None))
    return {w for w in missing if (m := moves[w]) is not None and m < below}
