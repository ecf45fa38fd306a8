"""More of a found note than its best sentence: its other sentences that hold the
question's rarer words.

A source result's snippet is the sentence that matched best with the one before and the
one after it (:func:`memserver.search.source_arms.sentence_context`). A note often says
the thing asked a few lines further on, in fewer of the question's words: a meeting
transcript that opens with "Globex signed the paid pilot agreement" names the "three
warehouses (Denver, Aurora, Pueblo)" ten lines later. Those sentences are added to the snippet,
after a line holding only ``…`` (:data:`memserver.kb.chunks.GAP`), in the note's order: up to
:data:`MORE_LINES` of them, each holding at least :data:`MORE_SHARE` of the rarity of
the question's words (:func:`memserver.search.source_arms.source_rank_sql`), while the
snippet stays within the mode's characters.
"""

from __future__ import annotations

from collections.abc import Mapping

from memserver.kb.chunks import GAP
from memserver.search.source_arms import MATCHED_SENTENCE, matched_params, source_rank_sql
from memserver.search.text_query import Conn, TextQuery
from memserver.search.types import SOURCE_PREFIX

MORE_LINES = 2  # sentences added to a note's snippet at most
MORE_SHARE = 0.25  # of the question words' rarity a sentence holds to be added


def more_lines(
    conn: Conn,
    query: TextQuery,
    matched: Mapping[str, str],
    shown: Mapping[str, str],
    room: int | None,
) -> dict[str, str]:
    """For source results (id -> the sentence that matched best), what is shown of each
    (``shown``: that sentence with its neighbours) and then the note's other sentences
    that hold the question's rarer words (see the module docstring); an id with nothing
    to add is left out. ``room``: the snippet's characters at most (None: no limit)."""
    if query.empty or not matched:
        return {}
    ranking = source_rank_sql(conn, query)
    rows = conn.execute(
        f"{MATCHED_SENTENCE} SELECT path, ordinal, text, m FROM (SELECT c.path, c.ordinal, c.text,"
        f" {ranking.matched} AS m, row_number() OVER (PARTITION BY c.path"
        f" ORDER BY {ranking.rank} DESC, c.ordinal) AS n"
        " FROM source_chunks c JOIN hit ON c.path = hit.path"
        " WHERE c.ordinal NOT BETWEEN hit.ordinal - 1 AND hit.ordinal + 1"
        f" AND c.tsv @@ ({query.any_sql()})) x WHERE n <= %(k)s ORDER BY path, ordinal",
        {**ranking.params, **matched_params(matched), "k": MORE_LINES},
    ).fetchall()
    found: dict[str, list[str]] = {}
    for path, _ordinal, text, rarity in rows:
        if ranking.share(float(rarity)) >= MORE_SHARE:
            found.setdefault(SOURCE_PREFIX + path, []).append(" ".join(text.split()))
    return {i: _joined(shown.get(i) or matched[i], lines, room) for i, lines in found.items()}


def _joined(snippet: str, lines: list[str], room: int | None) -> str:
    out = snippet
    for line in lines:
        longer = f"{out}{GAP}{line}"
        if room is not None and len(longer) > room:
            break
        out = longer
    return out
