"""``[folder/slug]`` citations: find them in an answer, collect the pages the tools
returned, and remove every citation of a page the tools never returned.

A citation is a square-bracketed page id, ``[meetings/2026-11-12-globex-review]``;
several ids may share one bracket (``[people/bob-martinez, meetings/x]``). Models also
write ``[knowledge/people/bob.md]`` or ``[[people/bob]]``: both are read as
``people/bob``. A bracket whose first path segment has no letter (``[2026/11/12]``) or
that is a markdown link label (``[text](url)``) is not a citation.

The answer keeps only citations of pages the tools returned in this conversation
(``CitedPage``); the server filters every tool result to the token's folders, so a kept
citation is always inside the token's scope.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# A bracket without nested brackets or newlines, not followed by "(" (a markdown link).
_BRACKET = re.compile(r"\[([^\[\]\n]{3,300})\](?!\()")
# folder/slug, and source/<path> for raw sources: letters/digits of any script, '-', '_', '.'.
_ID = re.compile(r"^[\w-]+(?:/[\w.\-]+)+$")
_SPLIT = re.compile(r"[\s,;]+")
_CONNECTORS = frozenset({"and", "&", "see", "source:", "sources:", "и", "ба"})
_EMPTY = re.compile(r"\[\s*\]|\[\[\s*\]\]")
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([.,;:!?)])")
_DOUBLE_SPACE = re.compile(r"(?<=\S)[ \t]{2,}")


@dataclass(frozen=True)
class CitedPage:
    """A page the tools returned: what a kept citation points at (a raw note the tools
    returned is cited the same way, as ``source/<path>``)."""

    id: str
    title: str = ""
    date: str | None = None

    @property
    def folder(self) -> str:
        return self.id.split("/", 1)[0]

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "folder": self.folder, "title": self.title, "date": self.date}


@dataclass(frozen=True)
class CheckedAnswer:
    """An answer after verification: the text, the kept and the removed citations."""

    text: str
    cited: tuple[str, ...]  # ids kept, in order of first appearance
    removed: tuple[str, ...]  # ids removed because no tool returned them


def normalize_id(text: str) -> str | None:
    """The page id a citation means, or None when ``text`` is not a page id."""
    value = text.strip().strip("[]`'\"").strip()
    value = value.removeprefix("source:").strip() if value.startswith("source:") else value
    value = value.removeprefix("knowledge/").removesuffix(".md").strip("/")
    if not _ID.match(value):
        return None
    folder = value.split("/", 1)[0]
    if not any(ch.isalpha() for ch in folder):
        return None  # "2026/11/12" is a date, not a page
    return value


def _parts(inner: str) -> list[str]:
    return [p for p in _SPLIT.split(inner.strip()) if p and p.lower() not in _CONNECTORS]


def extract_citations(text: str) -> list[str]:
    """Every page id cited in ``text``, in order of first appearance, without repeats."""
    seen: dict[str, None] = {}
    for match in _BRACKET.finditer(text):
        parts = _parts(match.group(1))
        ids = [normalize_id(p) for p in parts]
        if parts and all(i is not None for i in ids):
            for i in ids:
                seen.setdefault(i or "", None)
    return list(seen)


def verify(text: str, known: Mapping[str, CitedPage] | Iterable[str]) -> CheckedAnswer:
    """Keep citations of ``known`` pages (normalised to ``[folder/slug]``), drop the rest."""
    allowed = set(known)
    cited: dict[str, None] = {}
    removed: dict[str, None] = {}

    def replace(match: re.Match[str]) -> str:
        parts = _parts(match.group(1))
        ids = [normalize_id(p) for p in parts]
        if not parts or any(i is None for i in ids):
            return match.group(0)  # not a citation: leave the text alone
        keep = []
        for page in ids:
            assert page is not None
            if page in allowed:
                if page not in keep:
                    keep.append(page)
                cited.setdefault(page, None)
            else:
                removed.setdefault(page, None)
        return f"[{', '.join(keep)}]" if keep else ""

    out = _BRACKET.sub(replace, text)
    if removed:
        out = _tidy(out)
    return CheckedAnswer(out, tuple(cited), tuple(removed))


def _tidy(text: str) -> str:
    """Spacing left behind by removed citations: ``claim  .`` -> ``claim.``."""
    text = _EMPTY.sub("", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _DOUBLE_SPACE.sub(" ", text)
    return "\n".join(line.rstrip() for line in text.split("\n")).strip()


# -- pages returned by tools --------------------------------------------------------------

_ID_KEYS = ("id", "page_id", "page")
_TITLE_KEYS = ("title", "page_title", "name")
_DATE_KEYS = ("date", "effective_date", "page_date")


def pages_in(value: Any) -> Iterator[CitedPage]:
    """Every page in a tool result: each object holding a page id (with its title and date).

    Works on any result shape (``results``, ``pages``, ``neighbors``, a page itself), so a
    new read tool needs no change here.
    """
    if isinstance(value, Mapping):
        for key in _ID_KEYS:
            raw = value.get(key)
            if isinstance(raw, str) and (page := normalize_id(raw)) is not None:
                yield CitedPage(page, _first_text(value, _TITLE_KEYS), _first_date(value))
                break
        for item in value.values():
            if isinstance(item, Mapping | list | tuple):
                yield from pages_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from pages_in(item)


def _first_text(value: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        item = value.get(key)
        if isinstance(item, str) and item.strip():
            return item.strip()
    return ""


def _first_date(value: Mapping[str, Any]) -> str | None:
    text = _first_text(value, _DATE_KEYS)
    return text[:10] if text else None


def merge_pages(into: dict[str, CitedPage], found: Iterable[CitedPage]) -> None:
    """Add pages to ``into``, filling a missing title or date from a later sighting."""
    for page in found:
        old = into.get(page.id)
        if old is None:
            into[page.id] = page
        elif (not old.title and page.title) or (old.date is None and page.date):
            into[page.id] = CitedPage(old.id, old.title or page.title, old.date or page.date)
