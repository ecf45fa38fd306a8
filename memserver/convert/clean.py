"""Converted text made clean in one place, whatever the format it came from, so every note
reaches the extractors as a markdown note written by hand would.

- Markup a converter leaves behind goes: HTML comments (a slide's ``<!-- Slide number: 2
  -->``), a form feed between pages. ``<private>`` spans stay for the redaction.
- Runs of spaces inside a line (a justified PDF line) become one space; indentation and
  fenced code are left as they are.
- Lines broken in mid-sentence (a PDF's or a plain-text e-mail's wrapped lines) are joined
  into their paragraph: a line that does not end a sentence is joined to the next when the
  next one goes on with the sentence (starts with a lower-case letter, a digit or a
  bracket) or the line fills most of its paragraph's width (it was wrapped, not ended).
  Headings, list items, table rows, quotes and code are never joined.
- For a text without structure (a PDF's), a short line standing alone above a paragraph,
  without a sentence's end, is a heading (``## Team``), so its words do not run into the
  paragraph's first name.
- For slides, each slide's title is a ``##`` heading under the deck's and each of its text
  lines a list item: a slide's lines are points, not one paragraph.
- Tables stay tables.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# A converter's genre: what kind of writing a note is (the ingest agent reads it).
TRANSCRIPT = "transcript"  # a meeting's words as spoken: it records a meeting
EMAIL = "email"  # messages written to people
CHAT = "chat"  # a channel's messages
DOCUMENT = "document"
SLIDES = "slides"
SPREADSHEET = "spreadsheet"
GENRES = (TRANSCRIPT, EMAIL, CHAT, DOCUMENT, SLIDES, SPREADSHEET)

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_SPACES = re.compile(r"(?<=\S)[ \t\u00a0]{2,}(?=\S)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"[.!?:;…]['\"’”)\]]*$")
_GOES_ON = re.compile(r"^[a-zа-яёөү0-9(\[\"“‘'&%$€£₮,.;:–—-]")
_JOINING_END = re.compile(r"[,(\[/&+–—-]$")
WRAPPED = 0.75  # a line this share of its paragraph's longest line was wrapped, not ended
MIN_WRAP_WIDTH = 30  # ... when that paragraph's lines are at least this long
HEADING_WORDS = 6  # a line alone of at most this many words can be a heading


def clean_text(text: str, *, genre: str = DOCUMENT, structured: bool = True) -> str:
    """``text`` cleaned (see the module docstring). ``structured`` says the converter wrote
    markdown headings and lists (False for a PDF's plain text: headings are inferred)."""
    text = _COMMENT.sub("", text.replace("\r\n", "\n").replace("\f", "\n\n"))
    lines = list(_squeezed(text.split("\n")))
    if genre == SLIDES:
        lines = list(_slides(lines))
    if not structured:
        lines = list(_headings(lines))
    # a chat's and a transcript's line breaks are the speaker's own, never a wrap
    joined = "\n".join(lines if genre in (CHAT, TRANSCRIPT) else _rejoin(lines))
    return re.sub(r"\n{3,}", "\n\n", joined).strip()


def without_title(text: str, title: str) -> str:
    """``text`` without a first heading or line that only repeats the note's ``title`` (a
    PDF's first line, a deck's title slide): the note renders its title itself."""
    first, _, rest = text.partition("\n")
    if " ".join(first.lstrip("#").split()).casefold() == " ".join(title.split()).casefold():
        return rest.strip()
    return text


def _squeezed(lines: list[str]) -> Iterator[str]:
    """Each line squeezed (:func:`_squeeze`), but inside code fences."""
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
        yield line if fenced or _FENCE.match(line) else _squeeze(line)


def _squeeze(line: str) -> str:
    """The line without trailing spaces, its inner runs of spaces one space (a table row
    is kept as it is: its cells' spacing is its layout)."""
    line = line.rstrip()
    return line if line.lstrip().startswith("|") else _SPACES.sub(" ", line)


def _kind(line: str) -> str:
    """What a line is for joining: blank, fixed (never joined) or text."""
    stripped = line.strip()
    if not stripped:
        return "blank"
    if (
        _HEADING.match(stripped)
        or stripped.startswith(("|", ">", "<"))
        or _FENCE.match(stripped)
        or line.startswith(("    ", "\t"))
    ):
        return "fixed"
    return "text"


def _paragraphs(lines: list[str]) -> Iterator[tuple[bool, list[str]]]:
    """Runs of lines: (whether they are text lines to join, the lines). List items start
    a run of their own; code fences keep everything inside them fixed."""
    run: list[str] = []
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            if run:
                yield True, run
                run = []
            fenced = not fenced
            yield False, [line]
            continue
        kind = "fixed" if fenced else _kind(line)
        if kind != "text" or _ITEM.match(line):
            if run:
                yield True, run
                run = []
            if kind == "text":  # a list item: its continuation lines may follow
                run = [line]
            else:
                yield False, [line]
            continue
        run.append(line)
    if run:
        yield True, run


def _rejoin(lines: list[str]) -> Iterator[str]:
    for is_text, run in _paragraphs(lines):
        if not is_text or len(run) == 1:
            yield from run
            continue
        width = max(len(line.strip()) for line in run)
        out = [run[0]]
        for line in run[1:]:
            if _continues(out[-1], line, width):
                out[-1] = _joined(out[-1], line.strip())
            else:
                out.append(line)
        yield from out


def _continues(line: str, following: str, width: int) -> bool:
    """Whether ``following`` goes on with the sentence ``line`` broke off."""
    if _ITEM.match(following):
        return False
    head = line.strip()
    if _SENTENCE_END.search(head):
        return False
    if _GOES_ON.match(following.strip()) or _JOINING_END.search(head):
        return True
    return width >= MIN_WRAP_WIDTH and len(head) >= WRAPPED * width


def _joined(line: str, following: str) -> str:
    """Two parts of a broken line; a word hyphenated across them is joined whole."""
    if re.search(r"[a-zа-яё]-$", line) and re.match(r"[a-zа-яё]", following):
        return line[:-1] + following
    return f"{line} {following}"


def _headings(lines: list[str]) -> Iterator[str]:
    """Plain text's short lines alone above a paragraph, as ``##`` headings."""
    ended = True  # the line above ended (a blank, a sentence's end, a heading)
    for i, line in enumerate(lines):
        stripped = line.strip()
        following = next((x for x in lines[i + 1 :] if x.strip()), "")
        if ended and _heading_like(stripped, following):
            yield f"## {stripped}"
            continue
        yield line
        ended = not stripped or bool(_SENTENCE_END.search(stripped) or _HEADING.match(stripped))


def _heading_like(line: str, following: str) -> bool:
    words = line.split()
    return (
        0 < len(words) <= HEADING_WORDS
        and line[:1].isupper()
        and _SENTENCE_END.search(line) is None
        and not _ITEM.match(line)
        and _kind(line) == "text"
        and bool(following)
        and not _GOES_ON.match(following.strip())
    )


def _slides(lines: list[str]) -> Iterator[str]:
    """A deck's slides: titles one level down, text lines as list items."""
    for line in lines:
        heading = _HEADING.match(line)
        if heading is not None:
            level = min(6, len(heading.group(1)) + 1)
            yield f"{'#' * level} {heading.group(2).strip()}"
        elif _kind(line) == "text" and not _ITEM.match(line):
            yield f"- {line.strip()}"
        else:
            yield line
