"""How far a source is trusted: its level, from the knowledge base's ``schema.yaml``.

A note is *trusted*, *ordinary* or *untrusted*. ``schema.yaml`` says which::

    trust:
      default: ordinary           # a note no rule below names
      sources:                    # a folder under source/ (the longest that holds the
        decisions: trusted        # note wins) or a chat channel written "#name"
        slack/random: untrusted
        "#random": untrusted
      authors:                    # who wrote the note (frontmatter author, from, or a
        Unknown Intern: untrusted # chat message's sender): can only lower its level

The level of a note is its channel's rule (a converted chat export's ``channel``) when
one is declared, else the longest folder rule that holds its path, else ``default``
(``ordinary`` when unset); then the lowest level of a declared author who wrote in it.
An author never raises a note above its folder: anyone who can drop a file into
``source/`` can write any name in it. Only a folder (who may write into it) and a
channel (a chat export the company produced) say where a note really came from.

What a level allows is the server's write gate (``memserver.server.trust_gate``).
Pure values and functions: no I/O here.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memserver.kb.words import normalize_name


class Level(enum.IntEnum):
    """A source's trust, lowest first (so ``min`` of several is the weakest)."""

    UNTRUSTED = 0
    ORDINARY = 1
    TRUSTED = 2

    @property
    def word(self) -> str:
        return self.name.lower()

    @classmethod
    def of(cls, word: str) -> Level:
        return cls[word.strip().upper()]


LEVEL_WORDS = tuple(level.word for level in Level)
DEFAULT_LEVEL = Level.ORDINARY
CHANNEL_MARK = "#"
# Who wrote a note, in its frontmatter (a converted email or document: ``author``; a
# note written by hand: any of these).
_AUTHOR_KEYS = ("author", "authors", "from", "by", "written_by")
# A converted chat or transcript lists its speakers as ``attendees`` (an email also lists
# who it was sent to: its ``author`` is the sender, so they are not read then).
_SPEAKER_KEYS = ("attendees",)
# A chat message's first line as the Slack converter writes it (``**Name** 14:32``, a
# reply "↳ **Name** 14:35", a day apart "**Name** 2026-11-18 23:59"), and as people
# paste chat into notes (``**Name** 09:12: text``).
_CHAT_LINE = re.compile(
    r"^[ \t]*(?:↳[ \t]*)?\*\*(?P<who>[^*\n]{1,80})\*\*[ \t]+(?:\d{4}-\d{2}-\d{2}[ \t]+)?"
    r"\d{1,2}:\d{2}\b",
    re.MULTILINE,
)
_MAX_AUTHORS = 200  # a day of a busy channel; more are not read (the level can only fall)


@dataclass(frozen=True)
class Standing:
    """A note's level and why it has it (shown in the review list)."""

    level: Level
    why: str


@dataclass(frozen=True)
class TrustRules:
    """The ``trust:`` block of ``schema.yaml`` (see the module docstring)."""

    default: Level = DEFAULT_LEVEL
    sources: Mapping[str, Level] = field(default_factory=dict)  # folder path or "#channel"
    authors: Mapping[str, tuple[str, Level]] = field(default_factory=dict)  # key -> (name, level)

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> TrustRules:
        """From the validated ``trust:`` mapping (None: the defaults)."""
        if not data:
            return cls()
        sources = {
            rule_key(str(key)): Level.of(str(level))
            for key, level in (data.get("sources") or {}).items()
        }
        authors = {
            normalize_name(str(name)): (str(name).strip(), Level.of(str(level)))
            for name, level in (data.get("authors") or {}).items()
            if normalize_name(str(name))
        }
        default = Level.of(str(data["default"])) if data.get("default") else DEFAULT_LEVEL
        return cls(default=default, sources=sources, authors=authors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "default": self.default.word,
            "sources": {key: level.word for key, level in self.sources.items()},
            "authors": {name: level.word for name, level in self.authors.values()},
        }

    def standing(
        self, path: str, channel: str | None = None, authors: Iterable[str] = ()
    ) -> Standing:
        """The level of the note at ``path`` (relative to ``source/``), in ``channel``,
        written by ``authors``, and why."""
        level, why = self._place(path, channel)
        for name in list(dict.fromkeys(authors))[:_MAX_AUTHORS]:
            declared = self.authors.get(normalize_name(name))
            if declared is not None and declared[1] < level:
                level, why = declared[1], f"its author {declared[0]} is {declared[1].word}"
        return Standing(level, why)

    def _place(self, path: str, channel: str | None) -> tuple[Level, str]:
        if channel:
            key = rule_key(CHANNEL_MARK + channel.lstrip(CHANNEL_MARK))
            if key in self.sources:
                return self.sources[key], f"channel {key} is {self.sources[key].word}"
        note = rule_key(path)
        best = ""
        for key in self.sources:
            if key.startswith(CHANNEL_MARK) or len(key) <= len(best):
                continue
            if note == key or note.startswith(key + "/") or note.startswith(key + "#"):
                best = key
        if best:
            return self.sources[best], f"source/{best} is {self.sources[best].word}"
        return self.default, f"a note from source/{note} is {self.default.word} by default"


def rule_key(text: str) -> str:
    """A folder path or channel as rules compare them: forward slashes, no ``source/``
    prefix, no slashes at either end, case-folded (``Slack/Random/`` = ``slack/random``)."""
    key = text.strip().replace("\\", "/").strip("/").casefold()
    return key.removeprefix("source/")


def note_authors(text: str, front: Mapping[str, Any]) -> list[str]:
    """Who wrote the note: its frontmatter's author keys, a converted chat's speakers
    (``attendees``, unless an author is given: an email's are its recipients) and the
    senders of chat messages pasted into it."""
    found: list[str] = []
    for key in _AUTHOR_KEYS:
        found += _names(front.get(key))
    if not found:
        for key in _SPEAKER_KEYS:
            found += _names(front.get(key))
    found += [m.group("who").strip() for m in _CHAT_LINE.finditer(text)]
    return list(dict.fromkeys(n for n in found if n))


def note_channel(front: Mapping[str, Any]) -> str | None:
    value = front.get("channel")
    return str(value).strip() or None if isinstance(value, str | int) else None


def _names(value: Any) -> Sequence[str]:
    if isinstance(value, str):
        # "Alex Kim <alex@acme.example>": the name; several in one string, by commas
        return [part.split("<")[0].strip() or part.strip() for part in value.split(",")]
    if isinstance(value, list | tuple):
        return [n for item in value for n in _names(item)][:_MAX_AUTHORS]
    return []
