"""A note as the extractors read it: its frontmatter, first heading and body lines
(:func:`split_source`), a title from a heading or a file name, and a value read as a
field's type (:func:`coerce`), shared by the rules and the LLM extractor.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any
from zoneinfo import ZoneInfo

from ingest_agent.extract.text import full_name, plain, resolve_date
from ingest_agent.names import norm
from memserver.kb.chunks import LABELS
from memserver.kb.frontmatter import frontmatter_end, load_yaml
from memserver.kb.page import as_date
from memserver.kb.schema import FieldSpec
from memserver.kb.words import STOPWORDS

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_TRAILING_DATE = re.compile(r"\s*(?:[—–:|,-]\s*)?\(?\d{4}-\d{2}-\d{2}\)?\s*$")
_PARENS = re.compile(r"\([^()]*\)")
_ITEM_SPLIT = re.compile(r"\s*(?:,|;|\band\b|\s&\s)\s*")

# Known page names: norm(name) -> (folder, title), from the agent's lookups.
Known = Mapping[str, tuple[str, str]]


@dataclass
class NoteBody:
    """A note split for reading: its frontmatter, first ``#`` heading and remaining lines."""

    front: dict[str, Any]
    heading: str | None
    lines: list[str]


TEXT_BEFORE_TITLE = 2  # "[WIKI: policy_doc] ... published 2024-03-21", "---", "# Title"


def split_source(text: str) -> NoteBody:
    """Frontmatter (a mapping, {} when absent or broken), the first heading, body lines."""
    lines = text.replace("\r\n", "\n").removeprefix("\ufeff").split("\n")
    front: dict[str, Any] = {}
    end = frontmatter_end(lines) if lines and lines[0].strip() == "---" else None
    if end is not None:
        try:
            loaded = load_yaml("\n".join(lines[1:end]))
        except Exception:  # a broken frontmatter is read as text, never fatal
            loaded = None
        if isinstance(loaded, dict):
            front = {str(k): v for k, v in loaded.items()}
            lines = lines[end + 1 :]
    heading = None
    before = 0  # text lines before the title: an export's banner, a rule
    for index, line in enumerate(lines):
        match = _HEADING.match(line)
        if match and len(match.group(1)) == 1:
            heading = match.group(2).strip()
            lines = lines[:index] + lines[index + 1 :]
            break
        if line.strip() and not match:
            before += 1
            if before > TEXT_BEFORE_TITLE:
                break
    return NoteBody(front, heading, lines)


def clean_title(heading: str) -> str:
    """A heading as a title: without markup and a trailing date ("Globex demo — 2026-07-22")."""
    title = plain(heading)
    stripped = _TRAILING_DATE.sub("", title).strip(" —–-:|,")
    return stripped or title


TITLE_WORDS = 12  # a title made from a note's words is cut to this many
_CLOCK = re.compile(r"\[?\b\d{1,2}:\d{2}(?::\d{2})?\b\]?")
_MARKUP = re.compile(r"<!--.*?-->|<[^>]{1,40}>|[*_`]+")
_TAG = re.compile(r"\[(?:[^\]:]{1,30}:\s*)?([^\]]{0,60})\]")
_CODE = re.compile(r"^(?:[^\W\d_]+\d[\w]*|\d+[^\W\d_]+\w*|0\d+|\d{5,})$")
_SEASON = re.compile(r"^(?:[QHqh][1-4]|[vV]\d+(?:\.\d+)*)$")  # a quarter, a half, a version
_ISO_DAY = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")
_CLAUSE = re.compile(r"[,;:—–](?=\s)")
_LEAD = re.compile(r"^\**([^\W\d][\w .'’-]{0,40}?)\**\s*:\s*")  # "Maria:", "**Attendees:**"


def is_identifier(text: str) -> bool:
    """Whether a title is a code, not words: "EMG P01 F1 0", "ATM meeting 202210 0006",
    "INC-0042" (two codes, or a code half its words), never "Q3 roadmap" or "v2.1"."""
    tokens = re.split(r"[\s_/.-]+", _ISO_DAY.sub(" ", text).strip())
    tokens = [t for t in tokens if t]
    codes = [t for t in tokens if _CODE.match(t) and not _SEASON.match(t)]
    return len(codes) >= 2 or (bool(codes) and 2 * len(codes) >= len(tokens))


def tidy_title(text: str, words: int = TITLE_WORDS) -> str:
    """Words as a title: markup, clock times and tags gone, brackets and quotes that do
    not close gone, at most ``words`` words, cut at a clause's end when one falls in its
    second half (one at most a third longer is kept whole), without the small words a cut
    leaves at its end ("for 90 days only" is whole, and stays so)."""
    flat = _MARKUP.sub(" ", text)
    flat = _CLOCK.sub(" ", flat)
    flat = " ".join(flat.split()).strip(" ,.;:—–-|")
    if flat[:1] in '“"' and flat[-1:] in '”"':  # a quotation as a whole: its words
        flat = flat[1:-1].strip(" ,.;:")
    for opening, closing in ("()", "[]", "“”", "«»"):  # ’ is an apostrophe too
        if flat.count(opening) != flat.count(closing):
            flat = flat.replace(opening, "").replace(closing, "")
    for mark in ('"', "'"):
        if flat.count(mark) % 2:
            flat = flat.replace(mark, "") if mark == '"' else flat.strip("'")
    parts = flat.split()
    if len(parts) > words + words // 3:  # a sentence a little longer is kept whole
        head = " ".join(parts[:words])
        ends = [m.start() for m in _CLAUSE.finditer(head)]
        good = [e for e in ends if len(head[:e].split()) >= words // 2]
        flat = head[: good[-1]] if good else head
        parts = flat.split()
        while parts and parts[-1].casefold().strip(",.;:") in STOPWORDS:
            parts.pop()  # "... communicate to all product teams via": the cut's leftovers
    title = " ".join(parts).strip(" ,.;:—–-")
    return title[:1].upper() + title[1:] if title else ""


def content_title(lines: Sequence[str], labels: Collection[str] = ()) -> str:
    """A title from a note's words, for a note whose only title is a code: its banner
    ("[MEETING: roadmap review] Product — 2026-11-05": "Roadmap review Product")
    unless it holds nothing but ``labels`` ("[meeting_notes]"), else its first sentence
    that is no labelled line ("Attendees: ..."), without a speaker's name or a time
    stamp ("" when none)."""
    text = [line.strip() for line in lines if line.strip() and line.strip() != "---"]
    if not text:
        return ""
    known = {*LABELS, *(norm(label) for label in labels)}
    lead = _LEAD.match(text[0])
    if lead is None or norm(lead.group(1)) not in known:  # "Status: Resolved" is no banner
        banner = _TAG.sub(lambda m: f" {m.group(1)} — ", text[0])
        banner = tidy_title(_ISO_DAY.sub(" ", banner).replace("_", " "))
        banner = re.sub(r"\s*—(?:\s*—)+", " —", banner).strip(" —")
        words = norm(banner).split()
        if len(words) >= 2 and not is_identifier(banner) and not set(words) <= known:
            return banner
    for line in text[1:]:
        said = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", _CLOCK.sub(" ", line)).strip()
        lead = _LEAD.match(said)
        if lead is not None and norm(lead.group(1)) in known:
            continue  # "Attendees: ...": a labelled line, no sentence
        said = said[lead.end() :] if lead is not None else said
        first = re.split(r"(?<=[.!?])\s", plain(said), maxsplit=1)[0]
        title = tidy_title(first)
        if len(title.split()) >= 3:
            return title
    return ""


def title_from_path(path: str) -> str:
    stem = PurePosixPath(path).stem
    stem = re.sub(r"^\d{4}-\d{2}-\d{2}[-_ ]*", "", stem) or stem
    words = stem.replace("_", " ").replace("-", " ").split()
    text = " ".join(words)
    return text[:1].upper() + text[1:] if text else stem


def model_value(spec: FieldSpec, value: Any, doc_date: dt.date, tz: ZoneInfo) -> Any:
    """A model's value as the field's type (a date read against the note's date, so
    "yesterday" works), or None when it does not fit."""
    if spec.type == "date":
        day = resolve_date(value, doc_date, tz)
        return day.isoformat() if day else None
    return coerce(spec, value)


def coerce(spec: FieldSpec, value: Any) -> Any:
    """A frontmatter or labelled value as the field's type, or None when it does not fit."""
    if value is None:
        return None
    if spec.type == "date":
        day = as_date(value)
        if day is None:
            match = re.search(r"\d{4}-\d{2}-\d{2}", str(value))
            day = as_date(match.group(0)) if match else None
        return day.isoformat() if day else None
    if spec.type == "number":
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            return value
        text = re.sub(r"[,\s$€£₮]", "", str(value))
        try:
            number = float(text)
        except ValueError:
            return None
        return int(number) if number.is_integer() else number
    if spec.type == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        return (
            True
            if text in ("yes", "true", "1")
            else False
            if text in ("no", "false", "0")
            else None
        )
    if spec.type == "enum":
        text = norm(str(value)).replace(" ", "_")
        for allowed in spec.values:
            if norm(allowed).replace(" ", "_") == text:
                return allowed
        return None
    if spec.type in ("list", "links"):
        items = value if isinstance(value, list | tuple) else _ITEM_SPLIT.split(str(value))
        out = [" ".join(str(v).split()) for v in items if str(v).strip()]
        return out or None
    if spec.type == "text":
        return str(value).strip() or None
    text = " ".join(str(value).split())
    return text or None


def names_in_value(value: str, known: Known) -> list[str]:
    """Person-like names in a labelled value ("Bob Martinez (VP, Globex), Alex Kim")."""
    text = plain(value)
    while _PARENS.search(text):
        text = _PARENS.sub("", text)
    out = []
    for item in _ITEM_SPLIT.split(text):
        item = item.strip(" .")
        if not item:
            continue
        name = full_name(item) or (item if norm(item) in known else None)
        if name is not None:
            out.append(name)
    return out
