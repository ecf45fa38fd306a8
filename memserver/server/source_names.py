"""Source note paths, for a token that may not read the raw notes.

A note's path says what it is about (``decisions/2026-11-03-harbor-lease.md``), and a
page cites it in its ``sources``, in each timeline line (``[source: ...]``), in its
conflicts and its value history. A token without the ``source`` folder cannot open the
note, yet reading the path would tell it the hidden subject. So for such a token every
note path in what it reads becomes a stable, opaque label (:func:`label`,
``note-3f2a9c01d4``: the same note is the same label everywhere, and a label tells
nothing about the note); a writer of that kind that sends a page back has its labels
turned back into the page's own paths (:func:`unlabelled`), so its write loses none.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from memserver.errors import MemoryError_
from memserver.kb.page import Page, parse_page
from memserver.server.value_walk import map_strings, strings

# Result keys whose values are note paths (a page view, a timeline line, a conflict, a
# field's value history, a brief's evidence).
_KEYS = frozenset({"source", "sources", "old_source", "new_source", "ended_source"})
_INLINE = re.compile(r"\[source:\s*(?P<p>[^\]\n]{1,500}?)\s*\]")
_LABEL = re.compile(r"\bnote-[0-9a-f]{10}\b")


def label(path: str) -> str:
    """The opaque label of the note at ``path``."""
    key = path.strip().removeprefix("source/")
    return "note-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]


def hide_paths(value: Any) -> Any:
    """``value`` with every note path in it replaced by its label."""
    paths = _paths(value)
    if not paths:
        return value
    ordered = sorted(paths, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![\w./-])(?:source/)?(?:" + "|".join(re.escape(p) for p in ordered) + r")(?![\w/-])"
    )

    def change(text: str) -> str:
        return pattern.sub(lambda m: label(m.group(0)), text)

    return map_strings(value, change)


def unlabelled(page: Page, stored: Page) -> Page:
    """``page`` with the labels of ``stored``'s notes back as their paths (a label of a
    note the page never cited stays as it is)."""
    known = {label(p): p for p in _page_paths(stored)}
    if not known:
        return page

    def back(text: str | None) -> str | None:
        if text is None:
            return None
        return _LABEL.sub(lambda m: known.get(m.group(0), m.group(0)), text)

    timeline = tuple(
        dataclasses.replace(e, text=back(e.text) or "", source=back(e.source))
        for e in page.timeline
    )
    sections = {name: back(text) or "" for name, text in page.sections.items()}
    questions = tuple(back(q) or "" for q in page.open_questions)
    sources = tuple(back(s) or "" for s in page.sources)
    return dataclasses.replace(
        page, sources=sources, timeline=timeline, sections=sections, open_questions=questions
    )


def _paths(value: Any) -> set[str]:
    found: set[str] = set()
    _walk(value, found)
    for text in strings(value):
        found.update(m.group("p") for m in _INLINE.finditer(text))
        if text.startswith("---\n"):  # a version's markdown (kb_history)
            with contextlib.suppress(MemoryError_):  # not a page: its inline citations count
                found.update(_page_paths(parse_page(text)))
    return {p.strip().removeprefix("source/") for p in found if p.strip()}


def _walk(value: Any, found: set[str]) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in _KEYS:
                found.update(_names(item))
            else:
                _walk(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _walk(item, found)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        _walk(dataclasses.asdict(value), found)


def _names(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def _page_paths(page: Page) -> list[str]:
    return [*page.sources, *(e.source for e in page.timeline if e.source)]
