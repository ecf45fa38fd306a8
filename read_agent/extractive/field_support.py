"""What a field's answer shows beside its value: where the page belongs, and what states it.

"What position does Karen Lee hold?" is answered by her page's ``role``; the answer is
whole only with whom she holds it at, the page's link to another folder that says where
it belongs (``company: Globex``): :func:`belongs`. Which fields those are comes from the
schema (a field linking to one page of another folder, not a person's), never from the
field's name.

A value alone is the memory's word; the sentences of the page that hold the value's
words are where a note said it ("Alex Novak from Initech procurement emailed me ...")
and are shown under it: :func:`stating`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memserver.kb.schema import FolderSpec, Schema
from memserver.kb.words import STOPWORDS, words
from read_agent.extractive.evidence import Evidence, label, show
from read_agent.extractive.question import matched

STATING_SHARE = 0.5  # of the value's words a sentence holds to state it
STATING_LINES = 2  # sentences shown as stating a value at most


def belongs(schema: Schema, spec: FolderSpec, fields: Mapping[str, Any], asked: str) -> str:
    """``label: value`` of each field linking the page to one page of another folder
    that is not a person's (a person's company, a project's customer; a project's owner
    is someone, not where it belongs), or, for a person, to another person (whom they
    report to places them as their company does), but the one asked; joined by "; "."""
    people = {f.name for f in schema.folders if f.type == "person"}
    placed_by = (spec.name,) if spec.type == "person" else ()
    parts = [
        f"{label(f.name)}: {show(fields[f.name])}"
        for f in spec.fields
        if f.type == "link"
        and (f.folder not in (None, spec.name, *people) or f.folder in placed_by)
        and f.name != asked
        and fields.get(f.name) not in (None, "", [])
    ]
    return "; ".join(parts)


def stating(pieces: Sequence[Evidence], value: Any) -> list[Evidence]:
    """The page's sentences (not its fields, nor a line saying the field changed) that
    hold at least half the value's words, in the page's order."""
    wanted = [w for w in words(show(value)) if w not in STOPWORDS]
    if not wanted:
        return []
    out = []
    for piece in pieces:
        if piece.kind not in ("section", "timeline") or "changed from" in piece.text:
            continue
        if len(matched(wanted, words(piece.text))) >= STATING_SHARE * len(wanted):
            out.append(piece)
    return out[:STATING_LINES]
