"""The answer without a language model: the top ``kb_query`` results as a short digest.

Each line is one page: its date, title, the best matching snippet and its citation::

    Extractive answer (no language model): the most relevant pages for this question.
    - 2026-11-12 · Globex integration review: Go-live for all eight warehouses ... [meetings/2026-11-12-globex-integration-review]

It says plainly when the search found nothing. The digest is built from the tool's
result alone, so every citation in it is a page the tool returned.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from read_agent.citations import Source, normalize_id

DEFAULT_RESULTS = 5
SNIPPET_CHARS = 240
HEADER = "Extractive answer (no language model): the most relevant pages for this question."
NO_ANSWER = "The knowledge base has no answer to this question (the search found no pages)."

_SPACE = re.compile(r"\s+")


def digest(result: Mapping[str, Any], limit: int = DEFAULT_RESULTS) -> tuple[str, list[Source]]:
    """The digest text of a ``kb_query`` result, and the pages it cites (best first)."""
    lines: list[str] = []
    sources: list[Source] = []
    for item in _results(result):
        page = normalize_id(str(item.get("id") or ""))
        if page is None or any(s.id == page for s in sources):
            continue
        title = str(item.get("title") or "").strip()
        date = _date(item)
        source = Source(page, title, date)
        sources.append(source)
        snippet = _snippet(item, title)
        head = " · ".join(part for part in (date, title or page) if part)
        lines.append(f"- {head}: {snippet} [{page}]" if snippet else f"- {head} [{page}]")
        if len(sources) >= limit:
            break
    if not lines:
        return NO_ANSWER, []
    window = _window(result)
    header = HEADER if window is None else f"{HEADER} {window}"
    return "\n".join([header, *lines]), sources


def _results(result: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    items = result.get("results")
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, Mapping)]


def _date(item: Mapping[str, Any]) -> str | None:
    for key in ("date", "effective_date"):
        value = item.get(key)
        if isinstance(value, str) and value:
            return value[:10]
    return None


def _snippet(item: Mapping[str, Any], title: str) -> str:
    """The best chunk, its "<title> — <section>" prefix dropped, cut at a word boundary."""
    text = str(item.get("snippet") or item.get("text") or "")
    first, newline, rest = text.partition("\n")
    if newline and title and first.startswith(title):
        text = rest
    text = _SPACE.sub(" ", text).strip().lstrip("#-* ").strip()
    timeline = item.get("timeline")
    if not text and isinstance(timeline, list) and timeline:
        entry = timeline[0]
        if isinstance(entry, Mapping):
            text = f"{entry.get('date', '')} {entry.get('text', '')}".strip()
    if len(text) <= SNIPPET_CHARS:
        return text
    cut = text[:SNIPPET_CHARS].rsplit(" ", 1)[0].rstrip(",;:")
    return f"{cut} …"


def _window(result: Mapping[str, Any]) -> str | None:
    """``Dates: 2026-11-09 to 2026-11-16.`` when the question named a period."""
    time = result.get("time")
    if not isinstance(time, Mapping):
        return None
    window = time.get("window")
    if not isinstance(window, Mapping):
        return None
    start, end = window.get("start"), window.get("end")
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    return f"Dates searched: from {start[:10]} up to {end[:10]} (exclusive)."
