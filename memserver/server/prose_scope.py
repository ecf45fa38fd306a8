"""Out-of-scope page references in returned prose, and out-of-scope folders in errors.

Pages in a token's folders can mention pages outside them: the ingest agent writes
``Decision “Per-seat pricing for Acme Track” (decisions/2026-07-15-...)`` into a person's
timeline, authors write ``[[decisions/...]]`` and ``[the pricing call](meetings/...)``.
Returned as is, a ``people,meetings`` token would read a decision's title and id. So,
for a read-only token with limited folders, every string a tool returns goes through
:func:`redact_references` (the tool's result, before it is serialised):

- ``“Title” (folder/slug)``                 -> ``[redacted]``
- ``[words](folder/slug)`` (a markdown link) -> ``words`` (``[redacted]`` if they are the title)
- ``[[folder/slug|words]]``, ``[[folder/slug]]`` -> ``words``, or nothing
- ``[folder/slug]``, ``(folder/slug)``, a bare ``folder/slug`` -> nothing
- the title of a page referenced that way, anywhere else in the same text -> ``[redacted]``

Only ids of pages that exist are touched (``sources/..md`` paths and other slashes stay).

A writer with limited folders reads redacted text too, and writes whole pages back: its
version of a page is passed through :func:`restore_redacted` first, which puts back every
text it kept as it was shown (a timeline line, an open question, a field, a section or
the start of one), so the references are not lost; an update that would still drop one
is refused (:func:`referenced_pages` counted before and after).

:func:`scope_safe_message` does the same for error messages: a folder (or its page
type) outside the caller's scope that the caller did not name itself is replaced.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from memserver.kb.page import Page

REDACTED = "[redacted]"
OTHER_FOLDER = "[a folder outside your scope]"
# A slug: anything up to whitespace, brackets, quotes or separators (checked against
# the index afterwards, so a generous pattern is safe).
_SLUG = r"[^\s\[\]()<>{}\"'“”‘’,;|]+"
_TRAILING = ".:!?"

# folder/slug -> title, for the ids that are pages (looked up once per result)
TitleLookup = Callable[[Collection[str]], Mapping[str, str]]


def _id_pattern(folders: Iterable[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(f) for f in sorted(folders, key=len, reverse=True))
    return re.compile(rf"(?<![\w/])(?:{names})/{_SLUG}")


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, Mapping):
        return {key: _map_strings(item, change) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_map_strings(item, change) for item in value)
    return value


def referenced_pages(
    value: Any, hidden_folders: Collection[str], titles: TitleLookup
) -> Counter[str]:
    """How often the strings of ``value`` refer to each page of ``hidden_folders``."""
    if not hidden_folders:
        return Counter()
    pattern = _id_pattern(hidden_folders)
    found = [
        m.group(0).rstrip(_TRAILING).removesuffix(".md")
        for s in _strings(value)
        for m in pattern.finditer(s)
    ]
    pages = titles(set(found)) if found else {}
    return Counter(f for f in found if f in pages)


def redact_references(value: Any, hidden_folders: Collection[str], titles: TitleLookup) -> Any:
    """``value`` (a tool result: dicts, lists, strings) without references to pages of
    ``hidden_folders`` (see the module docstring)."""
    if not hidden_folders:
        return value
    pattern = _id_pattern(hidden_folders)
    candidates = {
        m.group(0).rstrip(_TRAILING) for s in _strings(value) for m in pattern.finditer(s)
    }
    if not candidates:
        return value
    candidates |= {c.removesuffix(".md") for c in candidates}
    pages = dict(titles(candidates))
    if not pages:
        return value
    return _map_strings(value, lambda text: _redact_text(text, pattern, pages))


def _redact_text(text: str, pattern: re.Pattern[str], pages: Mapping[str, str]) -> str:
    found = {m.group(0).rstrip(_TRAILING) for m in pattern.finditer(text)}
    ids = {i for i in found | {f.removesuffix(".md") for f in found} if i in pages}
    if not ids:
        return text
    for page_id in sorted(ids, key=len, reverse=True):
        title = pages[page_id]

        def words(match: re.Match[str], title: str = title) -> str:
            said = match.group(1) or ""
            return REDACTED if _same(said, title) else said

        ref = re.escape(page_id) + r"(?:\.md)?"
        quoted = rf"[“\"]{re.escape(title)}[”\"]" if title else r"(?!)"
        text = re.sub(rf"{quoted}\s*\({ref}\)", REDACTED, text)
        text = re.sub(rf"\[([^\[\]]*)\]\({ref}\)", words, text)
        text = re.sub(rf"\[\[{ref}(?:\|([^\[\]]*))?\]\]", words, text)
        text = re.sub(rf"\s?[\[(]{ref}[\])]", "", text)
        text = re.sub(rf"(?<![\w/]){ref}(?![\w/-])", "", text)
        if title:
            text = re.sub(re.escape(title), REDACTED, text, flags=re.IGNORECASE)
    return re.sub(r"[ \t]{2,}", " ", text)


def _same(words: str, title: str) -> bool:
    return bool(title) and " ".join(words.split()).casefold() == " ".join(title.split()).casefold()


def scope_safe_message(message: str, hidden_names: Collection[str], said: str) -> str:
    """``message`` with every name in ``hidden_names`` (folders and page types outside the
    scope) replaced, unless the caller wrote that name itself (``said``: its arguments)."""
    for name in sorted(hidden_names, key=len, reverse=True):
        if not name or re.search(rf"(?<!\w){re.escape(name)}(?!\w)", said):
            continue
        message = re.sub(rf"(?<![\w/]){re.escape(name)}(?!\w)", OTHER_FOLDER, message)
    return message


def restore_redacted(new: Page, stored: Page, shown: Mapping[str, Any]) -> Page:
    """``new``, written from ``shown`` (``stored.to_dict()`` as redacted for the writer),
    with every text it kept as shown put back as stored."""

    def key(date: Any, text: str, source: str | None) -> tuple[str, str, str | None]:
        return str(date), " ".join(text.split()), source

    entries = {
        key(e["date"], e["text"], e["source"]): original
        for e, original in zip(shown["timeline"], stored.timeline, strict=True)
    }
    questions = {
        " ".join(q.split()): original
        for q, original in zip(shown["open_questions"], stored.open_questions, strict=True)
    }
    sections = {}
    for heading, body in new.sections.items():
        was, original = shown["sections"].get(heading), stored.sections.get(heading)
        if was is not None and original is not None and body.startswith(was):
            body = original + body[len(was) :]
        sections[heading] = body
    shown_fields = shown["fields"]
    fields = {
        name: stored.fields[name]
        if name in stored.fields and _plain(value) == _plain(shown_fields.get(name))
        else value
        for name, value in new.fields.items()
    }
    return dataclasses.replace(
        new,
        fields=fields,
        sections=sections,
        timeline=tuple(entries.get(key(e.date, e.text, e.source), e) for e in new.timeline),
        open_questions=tuple(questions.get(q, q) for q in new.open_questions),
    )


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
