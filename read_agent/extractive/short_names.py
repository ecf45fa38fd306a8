"""Who a line's short name is: "Priya will own the Globex rollout" answers "who is in
charge of the Globex rollout?" with a first name; the entity index says it is Priya Shah
(an alias of her page), and the line says so, citing her page:

    2026-08-28 · Priya will own the Globex rollout end to end. — Priya: Priya Shah [people/priya-shah]

Only a person's page the index is sure of (its title, an alias, the name in the other
script) is named, and only when the line does not already say the full name."""

from __future__ import annotations

import re
from dataclasses import replace

from memserver.kb.words import words
from read_agent.extractive.line import Line, Part
from read_agent.extractive.page_reader import PageReader
from read_agent.tools.wire import Resolved

SURE = frozenset({"exact_title", "alias_hit", "transliteration"})
NAMES_TRIED = 6  # short names of one line looked up, at most
_WORD = r"[A-ZА-ЯЁӨҮ][a-zа-яёөү]+"
# runs of capitalised words: a run of one is a short name, a longer one a full name
_RUN = re.compile(rf"(?<![\w-]){_WORD}(?:\s+{_WORD})*(?![\w-])")


async def with_full_names(reader: PageReader, line: Line, known: frozenset[str]) -> Line:
    """``line`` with the full name of each person it names by a short name (not one of
    ``known``: the subjects asked about)."""
    if "kb_resolve" not in reader.tools.tools:
        return line
    said = f" {' '.join(words(line.text))} "
    parts: list[Part] = []
    for name in _alone(line.text)[:NAMES_TRIED]:
        found = Resolved.parse(await reader.call("kb_resolve", {"name": name, "limit": 2}))
        best = next(iter(found.candidates), None)
        if best is None or found.ambiguous or best.why not in SURE or best.id in known:
            continue
        full = " ".join(words(best.title))
        if len(full.split()) < 2 or f" {full} " in said:
            continue  # a one-word title, or the line says it already
        page = await reader.page(best.id)
        if page is not None and reader.is_person(page):
            parts.append(Part(f" — {name}: {best.title} ", best.id))
    return replace(line, parts=line.parts + tuple(parts)) if parts else line


def _alone(text: str) -> list[str]:
    runs = (run.split() for run in _RUN.findall(text))
    return list(dict.fromkeys(run[0] for run in runs if len(run) == 1 and len(run[0]) > 2))
