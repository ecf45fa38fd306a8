"""A page's outgoing references, computed without any I/O or LLM call (``extract_links``).

* ``link``/``links`` fields: the field's ``verb`` (else its name) to the field's folder;
* the folder's ``link_verbs`` patterns in section and timeline prose: "reports to Alice
  Chen" gives ``reports_to`` -> people "Alice Chen". The target is the wikilink or
  markdown link right after the pattern, else the run of capitalised words there; for a
  pattern that starts with ``{name}`` ("{name} тайлагнадаг", verb-last languages), the
  run of capitalised words before it, read with and without its case ending and from
  each of its words on (``LinkRef.forms``). A name is never looked up in the database
  here: what a page links to must not depend on which pages happen to exist yet.
* ``[[wikilinks]]`` (``[[people/alice-chen]]``, ``[[Alice Chen]]``, ``[[alice-chen|Alice]]``)
  and markdown links to pages (``[Alice](../people/alice-chen.md)``), with the verb
  ``mentions``.

``memserver.graph.linker`` matches the references to pages and stores them as edges.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from memserver.kb.page import Page
from memserver.kb.schema import FolderSpec, Schema
from memserver.kb.words import STOPWORDS, mn_stems, normalize_name

ORIGINS = ("field", "prose", "wikilink", "mdlink")
MENTIONS = "mentions"
# How many capitalised words after a link-verb pattern make a name ("Maria de la Cruz"
# has connectors; we stop at the first lower-case word instead of guessing).
_MAX_NAME_WORDS = 5

_WIKILINK = re.compile(r"\[\[([^\[\]\n|#]+)(?:#[^\[\]\n|]*)?(?:\|([^\[\]\n]*))?\]\]")
_MDLINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_WORD = re.compile(r"[^\W_](?:[\w'’-]*[^\W_])?")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


@dataclass(frozen=True)
class LinkRef:
    """One outgoing reference of a page, before it is matched to a page id."""

    verb: str
    target_ref: str  # the name or slug as written (no folder prefix, no ".md")
    to_folder: str | None  # the folder it must be in, when the reference says so
    origin: str  # "field" | "prose" | "wikilink" | "mdlink"
    # Other readings of the name, tried in turn when ``target_ref`` names no page (a
    # name before a Mongolian verb carries a case ending: "Ганбаатарт" -> "Ганбаатар").
    forms: tuple[str, ...] = ()

    @property
    def norm(self) -> str:
        return normalize_name(self.target_ref)


# --------------------------------------------------------------------------- extraction


def split_target(raw: str, folders: Collection[str]) -> tuple[str | None, str]:
    """``"people/alice-chen.md"`` -> ``("people", "alice-chen")``; no known folder -> None."""
    text = raw.strip().removeprefix("knowledge/")
    if text.lower().endswith(".md"):
        text = text[:-3]
    head, sep, tail = text.partition("/")
    if sep and head in folders and tail and "/" not in tail:
        return head, tail.strip()
    return None, text.strip()


def _field_values(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)] if str(value).strip() else []


def clean_ref(value: str) -> str:
    """A link field value as models write it: ``[[Alice Chen|Alice]]`` -> ``Alice Chen``."""
    text = value.strip()
    if match := _WIKILINK.fullmatch(text):
        return match.group(1).strip()
    if match := _MDLINK.fullmatch(text):
        return match.group(2).strip()
    return text


def _wikilink_ref(match: re.Match[str], verb: str, folders: Collection[str]) -> LinkRef | None:
    folder, name = split_target(match.group(1), folders)
    return LinkRef(verb, name, folder, "wikilink") if name else None


def _mdlink_ref(target: str, verb: str, current: str, folders: Collection[str]) -> LinkRef | None:
    """A markdown link target naming a page: ``../people/alice-chen.md``, ``people/x``,
    ``alice-chen.md`` (same folder). URLs, anchors and other files are not pages."""
    if _URL_SCHEME.match(target) or target.startswith(("#", "//")):
        return None
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]
    if parts and parts[0] == "knowledge":
        parts = parts[1:]
    if not parts:
        return None
    last = parts[-1]
    is_md = last.lower().endswith(".md")
    if is_md:
        last = last[:-3]
    elif "." in last:  # another kind of file (image, pdf, ...)
        return None
    if len(parts) >= 2 and parts[-2] in folders:
        folder: str | None = parts[-2]
    elif len(parts) == 1 and is_md:
        folder = current
    else:
        return None
    return LinkRef(verb, last.strip(), folder, "mdlink") if last.strip() else None


def _name_before(text: str) -> list[str]:
    """The run of capitalised words that ends ``text`` ("... Бат Ганбаатарт" ->
    ["Бат", "Ганбаатарт"]), at most _MAX_NAME_WORDS, without stop words at its start
    ("Тэр Бат Ганбаатарт" -> the same)."""
    words: list[str] = []
    for token in reversed(text.split()):
        word = token.strip(",;:()\"'“”«»")
        if token != word and words:  # punctuation after a word ends the run before it
            break
        if not word or not _WORD.fullmatch(word) or not word[0].isupper():
            break
        words.insert(0, word)
        if len(words) == _MAX_NAME_WORDS or token != word:
            break
    while words and normalize_name(words[0]) in STOPWORDS:  # "Тэр" (he), capitalised first
        words.pop(0)
    return words


def _readings(words: list[str]) -> list[str]:
    """A name that stands before its verb, most likely reading first. The run may start
    with a capitalised word that is not part of the name (the sentence's first word), so
    every tail of it is a reading, longest first; each with the last word's case ending
    removed (longest ending first), then as written."""
    out: list[str] = []
    for start in range(len(words)):
        head = " ".join(words[start:-1])
        out += [f"{head} {stem}".strip() for stem in mn_stems(words[-1])]
        out.append(" ".join(words[start:]))
    return [*dict.fromkeys(out)]


def _capitalised_name(text: str) -> str | None:
    """The run of capitalised words at the start of ``text`` ("Alice Chen, VP" -> "Alice Chen")."""
    words: list[str] = []
    pos = 0
    while len(words) < _MAX_NAME_WORDS:
        gap = pos
        while gap < len(text) and text[gap] in " \t":
            gap += 1
        if words and gap == pos:  # words must be separated by a space
            break
        match = _WORD.match(text, gap)
        if match is None or not match.group(0)[0].isupper():
            break
        word = match.group(0)
        stripped = _POSSESSIVE.sub("", word)
        words.append(stripped)
        pos = match.end()
        if stripped != word:  # "Alice's team": the name ends at the possessive
            break
    return " ".join(words) or None


@functools.lru_cache(maxsize=1024)
def _pattern(phrase: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in phrase.split()]
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)


def _prose_refs(text: str, folder: FolderSpec, folders: Collection[str]) -> Iterator[LinkRef]:
    for link_verb in folder.link_verbs:
        for phrase in link_verb.phrases:
            if not phrase.text:
                continue
            for hit in _pattern(phrase.text).finditer(text):
                if phrase.name_first:
                    words = _name_before(text[: hit.start()])
                    if words:
                        first, *others = _readings(words)
                        yield LinkRef(link_verb.verb, first, link_verb.to, "prose", tuple(others))
                    continue
                rest = text[hit.end() :]
                after = rest.lstrip(" \t:")
                if wiki := _WIKILINK.match(after):
                    wfolder, name = split_target(wiki.group(1), folders)
                    if name:
                        yield LinkRef(link_verb.verb, name, wfolder or link_verb.to, "prose")
                    continue
                if md := _MDLINK.match(after):
                    ref = _mdlink_ref(md.group(2), link_verb.verb, folder.name, folders)
                    if ref is not None:
                        yield LinkRef(ref.verb, ref.target_ref, ref.to_folder, "prose")
                    continue
                if person := _capitalised_name(after):
                    yield LinkRef(link_verb.verb, person, link_verb.to, "prose")


def _link_refs(text: str, current: str, folders: Collection[str]) -> Iterator[LinkRef]:
    for wiki in _WIKILINK.finditer(text):
        if ref := _wikilink_ref(wiki, MENTIONS, folders):
            yield ref
    for md in _MDLINK.finditer(text):
        if ref := _mdlink_ref(md.group(2), MENTIONS, current, folders):
            yield ref


def _prose(page: Page) -> list[str]:
    return [*page.sections.values(), *(entry.text for entry in page.timeline)]


def extract_links(page: Page, folder: FolderSpec, schema: Schema) -> list[LinkRef]:
    """Every outgoing reference of ``page`` (fields, link-verb prose, wikilinks, md links).

    Deterministic, no I/O. One reference per (verb, normalised name, origin), in the
    order found; references whose name has no letters or digits are dropped.
    """
    folders = schema.folder_names
    refs: list[LinkRef] = []
    for spec in folder.fields:
        if not spec.is_link:
            continue
        for value in _field_values(page.fields.get(spec.name)):
            target_folder, name = split_target(clean_ref(value), folders)
            refs.append(
                LinkRef(spec.verb or spec.name, name, target_folder or spec.folder, "field")
            )
    texts = _prose(page)
    for text in texts:
        refs.extend(_prose_refs(text, folder, folders))
    for text in texts:
        refs.extend(_link_refs(text, folder.name, folders))
    seen: set[tuple[str, str, str]] = set()
    out: list[LinkRef] = []
    for ref in refs:
        key = (ref.verb, ref.norm, ref.origin)
        if ref.norm and key not in seen:
            seen.add(key)
            out.append(ref)
    return out
