"""When the pages do not answer: the same question over the raw source notes too.

Pages are written by the ingest agent; a note it has not reached yet, or a detail it
left out, is only in ``source/``. So when a ``kb_query`` finds no page, or only pages
that nothing but nearness in meaning ties to the question (:func:`pages_answer`), the
agent asks ``kb_query`` again with ``include_sources: true`` and uses that result: the
notes it returns are cited as ``[source/<path>]``, like pages. A question for someone's
own words ("What did Priya say about the tickets?", :func:`asks_for_words`) reads the
notes even when pages answer: a page keeps what the ingest agent took from a note, the
note keeps what was said. Both modes use it: the
extractive digest (:func:`query_with_sources`) and the model's own ``kb_query`` calls.
A token without the ``source`` folder gets the pages alone (the server says
``sources_not_in_scope``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from read_agent.reading.lexicon import lexicon, says, tokens
from read_agent.tools.toolset import CallLog, Toolset

QUERY_TOOL = "kb_query"
SOURCE_PREFIX = "source/"
# Arms whose rank alone says only "near in meaning": not enough to call a page an answer.
WEAK_ARMS = frozenset({"vector", "graph_augment"})
WEAK_LABELS = frozenset({"weak_semantic", "outside_window"})


def _results(result: Any) -> Sequence[Mapping[str, Any]]:
    items = result.get("results") if isinstance(result, Mapping) else None
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


def answers(item: Mapping[str, Any]) -> bool:
    """Whether one result is evidence: found by more than nearness in meaning (a word, a
    name, a date, a link), and not labelled weak or outside the question's window."""
    labels = set(item.get("labels") or ())
    ranks = set(item.get("ranks") or ())
    return bool(ranks - WEAK_ARMS) and not labels & WEAK_LABELS


def pages_answer(result: Any) -> bool:
    """Whether a ``kb_query`` result holds a page (not a raw source) that answers."""
    return any(
        answers(item)
        for item in _results(result)
        if not str(item.get("id", "")).startswith(SOURCE_PREFIX)
    )


def asks_for_words(question: str) -> bool:
    """Whether a question asks what someone said, wrote or asked (the lexicon's
    ``quote`` words: :mod:`read_agent.reading`)."""
    return says(tokens(question), lexicon().kinds.get("quote", ()), exact=True)


def wants_sources(tools: Toolset, arguments: Mapping[str, Any], result: Any) -> bool:
    """Whether to ask again with the raw sources: the pages do not answer or the question
    asks for someone's words, sources were not searched yet, and ``kb_query`` takes
    ``include_sources``."""
    return (
        not arguments.get("include_sources")
        and QUERY_TOOL in tools.tools
        and tools.accepts(QUERY_TOOL, "include_sources")
        and (not pages_answer(result) or asks_for_words(str(arguments.get("question", ""))))
    )


async def query_with_sources(
    tools: Toolset, arguments: Mapping[str, Any], log: CallLog
) -> tuple[bool, str, Any]:
    """``kb_query`` with ``arguments``, then again with ``include_sources: true`` when its
    pages do not answer (:func:`wants_sources`); returns ``(ok, text, structured)`` of the
    call whose result to use, the second unless it failed."""
    first = await tools.call(QUERY_TOOL, arguments, log)
    ok, _, result = first
    if not ok or not wants_sources(tools, arguments, result):
        return first
    second = await tools.call(QUERY_TOOL, {**arguments, "include_sources": True}, log)
    return second if second[0] else first
