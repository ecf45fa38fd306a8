"""Out-of-scope page references in returned prose, and out-of-scope folders in errors.

Pages in a token's folders can mention pages outside them: the ingest agent writes
``Decision “Per-seat pricing for Acme Track” (decisions/2026-07-15-...)`` into a person's
timeline, authors write ``[[decisions/...]]`` and ``[the pricing call](meetings/...)``.
Returned as is, a ``people,meetings`` token would read a decision's title and id. So
everything that leaves the server for a token with limited folders (tool results, the
console's pages and review lists, the read agent's answers built from them, error
messages) goes through the one function :func:`redact_references`:

- ``“Title” (folder/slug)``                 -> ``[redacted]``
- ``[words](folder/slug)`` (a markdown link) -> ``words`` (``[redacted]`` if they are the title)
- ``[[folder/slug|words]]``, ``[[folder/slug]]`` -> ``words``, or nothing
- ``[[Title]]``, ``[[Title|words]]`` of a hidden page -> ``[redacted]``, or ``words``
- ``[folder/slug]``, ``(folder/slug)``, a bare ``folder/slug`` -> nothing, also written in
  backticks, bold or italics, with an anchor (``#x``) or a query (``?v=1``), as a
  relative, ``knowledge/...`` or ``/ui/page/...`` path, with ``.md``, in any letter case
- the title of a page referenced that way, anywhere in the same result (another section,
  another field) -> ``[redacted]``

Only ids of pages that exist are touched (``sources/..md`` paths and other slashes stay).
:meth:`Hidden.pieces` says which spans of a text are hidden and what stands in their
place, so a writer's edit of the shown text can be merged back onto the stored text
(``memserver.server.hidden_merge``).

:func:`scope_safe_message` does the same for error messages: a folder (or its page
type) outside the caller's scope that the caller did not name itself is replaced.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote

from memserver.server.value_walk import map_strings, strings

if TYPE_CHECKING:
    from memserver.server.scope import Scope
    from memserver.server.tools.base import Services

REDACTED = "[redacted]"
OTHER_FOLDER = "[a folder outside your scope]"

# A slug is letters, digits and marks of any script joined by '-' (``slugify``): it stops
# at whitespace, ASCII punctuation other than '-', dashes, quotes and the full-width
# slash; in a URL its letters may be percent-encoded (``%D0%BD``).
_SLUG_CHAR = (
    r"(?:%[0-9A-Fa-f]{2}"
    r"|[^\s!-,./:-@\[-`{-~\u2013\u2014\u2018\u2019\u201c\u201d\u00ab\u00bb\u2026\uff0f])"
)
_SLUG = rf"{_SLUG_CHAR}+(?:-{_SLUG_CHAR}+)*"
# A slug alone, without its folder, is only told from a word by its hyphens.
_BARE_SLUG = rf"(?<![^\W_])(?<![/\\\uff0f%-])(?P<bs>{_SLUG_CHAR}+(?:-{_SLUG_CHAR}+)+)(?![^\W_])"
# Between a folder and a slug: a slash, a backslash (a Windows path), a full-width slash.
_SEP = r"[/\\\uff0f]"
# How an id is written as a path or URL around it.
_PREFIX = r"(?:(?:https?://[^\s/]+)?/ui/page/|(?:\.{1,2}[/\\])+|[/\\]?knowledge[/\\])?"
_SUFFIX = r"(?:\.md)?(?:[#?][^\s()\[\]<>\"'`*|]+)?"
_WRAP = r"`|\*{1,3}|_{1,3}"
_NAME = r"[^\[\]|\n]{1,300}"


class PageLookup(Protocol):
    """What redaction asks the index (``KnowledgeBase`` answers)."""

    def titles(self, page_ids: Collection[str]) -> Mapping[str, str]: ...

    def pages_titled(
        self, names: Collection[str], folders: Collection[str]
    ) -> Mapping[str, str]: ...

    def former_titles(self, page_ids: Collection[str]) -> Mapping[str, Sequence[str]]: ...

    def pages_slugged(
        self, slugs: Collection[str], folders: Collection[str]
    ) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class Piece:
    """A hidden span ``[start, end)`` of a text and what is shown in its place."""

    start: int
    end: int
    shown: str


def _ref(folders: Iterable[str], tag: str) -> str:
    names = "|".join(re.escape(f) for f in sorted(folders, key=len, reverse=True))
    return rf"(?<![^\W_]){_PREFIX}(?P<{tag}f>{names}){_SEP}(?P<{tag}s>{_SLUG}){_SUFFIX}"


class Hidden:
    """The pages of hidden folders one value refers to, and how its texts hide them."""

    def __init__(
        self,
        folders: Collection[str],
        pages: Mapping[str, str],
        former: Mapping[str, Sequence[str]] | None = None,
        said: str = "",
    ) -> None:
        """``pages``: id -> title of the hidden pages referred to; ``former``: the titles
        they had before a rename (hidden as well); ``said``: the caller's own words (a
        title in them is not hidden: echoing it tells nothing, hiding it would tell the
        page exists; the page's id still is)."""
        self.folders = frozenset(folders)
        self.pages = dict(pages)  # id -> title
        spoken = said.casefold()
        names = [*self.pages.values(), *(t for ts in (former or {}).values() for t in ts)]
        self._titles = {t.casefold(): t for t in names if t.strip() and t.casefold() not in spoken}
        slugs = (i.split("/", 1)[1] for i in self.pages)
        self._slugs = {slug for slug in slugs if slug not in spoken}
        ref = _ref(self.folders, "r")
        flags = re.IGNORECASE
        self._forms: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]]] = [
            (re.compile(rf"[“\"][^”\"\n]{{1,300}}[”\"]\s*\({ref}\)", flags), self._whole),
            (re.compile(rf"\[(?P<w>[^\[\]\n]*)\]\({ref}\)", flags), self._words),
            (re.compile(rf"\[\[{ref}(?:\|(?P<w>[^\[\]\n]*))?\]\]", flags), self._words_or_none),
            (re.compile(rf"\[\[(?P<n>{_NAME})(?:\|(?P<w>[^\[\]\n]*))?\]\]"), self._named),
            (re.compile(rf"[ \t]?[\[(]{ref}[\])]", flags), self._none),
            (re.compile(rf"(?P<wrap>{_WRAP})?{ref}(?(wrap)(?P=wrap))", flags), self._none),
            (re.compile(rf"(?P<wrap>{_WRAP})?{_BARE_SLUG}(?(wrap)(?P=wrap))", flags), self._bare),
        ]
        self._title_re = (
            re.compile(
                r"(?<![^\W_])(?:"
                + "|".join(re.escape(t) for t in sorted(self._titles.values(), key=len)[::-1])
                + r")(?![^\W_])",
                flags,
            )
            if self._titles
            else None
        )

    @classmethod
    def of(
        cls, value: Any, folders: Collection[str], lookup: PageLookup, said: str = ""
    ) -> Hidden | None:
        """What ``value`` refers to in ``folders``; None when it refers to nothing there.
        Pages whose id the caller wrote itself (in ``said``) are not hidden from it."""
        if not folders:
            return None
        ref = re.compile(_ref(folders, "r"), re.IGNORECASE)
        named = re.compile(rf"\[\[(?P<n>{_NAME})(?:\|[^\[\]\n]*)?\]\]")
        bare = re.compile(_BARE_SLUG)
        ids: set[str] = set()
        names: set[str] = set()
        slugs: set[str] = set()
        for text in strings(value):
            ids.update(_id(m) for m in ref.finditer(text))
            names.update(m.group("n").strip() for m in named.finditer(text))
            slugs.update(unquote(m.group("bs")).lower() for m in bare.finditer(text))
        pages = dict(lookup.titles(ids)) if ids else {}
        names -= {n for n in names if ref.fullmatch(n)}
        if names:
            pages.update(lookup.pages_titled(names, folders))
        if slugs:
            pages.update(lookup.pages_slugged(slugs, folders))
        if said:  # an id the caller wrote itself is not hidden from it
            words = said.lower()
            pages = {i: t for i, t in pages.items() if i not in words}
        if not pages:
            return None
        return cls(folders, pages, lookup.former_titles(list(pages)), said)

    # -- one text ---------------------------------------------------------------------

    def pieces(self, text: str) -> list[Piece]:
        """The hidden spans of ``text``, in order, none overlapping (an earlier form wins)."""
        taken = _Spans()
        for pattern, shown in self._forms:
            for match in pattern.finditer(text):
                said = shown(match)
                if said is not None:
                    taken.add(Piece(match.start(), match.end(), said))
        if self._title_re is not None:
            for match in self._title_re.finditer(text):
                taken.add(Piece(match.start(), match.end(), REDACTED))
        return taken.pieces

    def text(self, text: str) -> str:
        """``text`` as the caller may read it."""
        return apply(text, self.pieces(text))

    def value(self, value: Any) -> Any:
        return map_strings(value, self.text)

    # -- what stands in a reference's place ------------------------------------------

    def _known(self, match: re.Match[str]) -> bool:
        return _id(match) in self.pages

    def _whole(self, match: re.Match[str]) -> str | None:
        return REDACTED if self._known(match) else None

    def _none(self, match: re.Match[str]) -> str | None:
        return "" if self._known(match) else None

    def _words(self, match: re.Match[str]) -> str | None:
        if not self._known(match):
            return None
        return self._said(match.group("w") or "")

    def _words_or_none(self, match: re.Match[str]) -> str | None:
        if not self._known(match):
            return None
        words = match.group("w")
        return self._said(words) if words else ""

    def _bare(self, match: re.Match[str]) -> str | None:
        return "" if unquote(match.group("bs")).lower() in self._slugs else None

    def _named(self, match: re.Match[str]) -> str | None:
        if " ".join(match.group("n").split()).casefold() not in self._titles:
            return None
        words = match.group("w")
        return self._said(words) if words else REDACTED

    def _said(self, words: str) -> str:
        """Link words as shown: the title of a hidden page in them is redacted."""
        if " ".join(words.split()).casefold() in self._titles:
            return REDACTED
        return self._title_re.sub(REDACTED, words) if self._title_re is not None else words


def _id(match: re.Match[str]) -> str:
    return f"{match.group('rf').lower()}/{unquote(match.group('rs')).lower()}"


class _Spans:
    """Pieces kept in order of their start; one overlapping a kept piece is dropped."""

    def __init__(self) -> None:
        self.pieces: list[Piece] = []
        self._starts: list[int] = []

    def add(self, piece: Piece) -> None:
        at = bisect.bisect_right(self._starts, piece.start)
        if at and self.pieces[at - 1].end > piece.start:
            return
        if at < len(self.pieces) and self.pieces[at].start < piece.end:
            return
        self.pieces.insert(at, piece)
        self._starts.insert(at, piece.start)


def apply(text: str, pieces: Iterable[Piece]) -> str:
    """``text`` with each piece replaced by what it shows."""
    out, at = [], 0
    for piece in pieces:
        out.append(text[at : piece.start])
        out.append(piece.shown)
        at = piece.end
    out.append(text[at:])
    return "".join(out)


def redact_references(
    value: Any, hidden_folders: Collection[str], lookup: PageLookup, said: str = ""
) -> Any:
    """``value`` (a tool result, a console view's data, an error message) without
    references to pages of ``hidden_folders`` (see the module docstring), except those
    the caller named itself (``said``: its arguments, for an error message)."""
    hidden = Hidden.of(value, hidden_folders, lookup, said)
    return value if hidden is None else hidden.value(value)


def redact_for(value: Any, scope: Scope, services: Services, said: str = "") -> Any:
    """``value`` as ``scope`` may read it: the one redaction every way out uses (tool
    results, error messages, the console's views); for a token that may not read the
    notes, their paths as labels (``memserver.server.source_names``). ``said``: the caller's own words (its
    question, the name it looks up): never redacted where they are echoed, so the echo
    never tells whether a hidden page by that name exists; only what comes from pages
    is."""
    if not scope.source:  # note paths name their subjects: labels instead
        from memserver.server.source_names import hide_paths

        value = hide_paths(value)
    if scope.folders is None:
        return value
    hidden = [f for f in services.schema().folder_names if not scope.allows_folder(f)]
    return redact_references(value, hidden, services.kb(), said)


def scope_safe_message(message: str, hidden_names: Collection[str], said: str) -> str:
    """``message`` with every name in ``hidden_names`` (folders and page types outside the
    scope) replaced, unless the caller wrote that name itself (``said``: its arguments)."""
    for name in sorted(hidden_names, key=len, reverse=True):
        if not name or re.search(rf"(?<!\w){re.escape(name)}(?!\w)", said):
            continue
        message = re.sub(rf"(?<![\w/]){re.escape(name)}(?!\w)", OTHER_FOLDER, message)
    return message
