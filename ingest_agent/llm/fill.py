"""The small profile's extraction: the rules extractor reads the note, the model fills
in the fields it left empty.

Asked to write whole pages from a note, a small model writes them badly (a meeting's
title as a person, an absent person as attendee, a company described from nowhere) and
slowly. Asked a narrow question it does better: for the pages the rules extractor
found, only the fields those pages still lack, under a JSON Schema compiled from their
folders' fields (one object per page, its empty fields, none required)::

    {"people/Bob Martinez": {"email": "...", "location": "..."},
     "companies/Globex": {"website": "...", "headquarters": "..."}}

The answer is grammar-constrained where the provider supports ``json_schema`` (else
JSON mode, validated: see ``LLMClient.chat_structured``). Every value is checked
against the note (``ingest_agent.llm.grounding``; an entity's value must stand next to
one of its names, a link value must be stated with its relation to one of the pages
the note names), so a value the note does not state is dropped and counted. Filled
values only fill: what the rules read (frontmatter, labelled lines, plain statements)
stays, and ``Extraction.filled`` tells the agent which fields a stored page's own
value must win over.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ingest_agent.extract.note import model_value
from ingest_agent.extract.text import blocks
from ingest_agent.llm.grounding import About, Grounds
from ingest_agent.names import norm
from ingest_agent.records import Draft, Extraction, Source, is_dated
from memserver.kb.page_rules import folder_json_schema
from memserver.kb.schema import FieldSpec, FolderSpec, Schema

MAX_PAGES = 6  # pages one fill request asks about (entities first, then the note's event)

SYSTEM = (
    "Task: fill\n"
    "You read one note and fill in facts about pages of a company knowledge base. {data}\n"
    "For each page listed, give only the fields the note states about that page, "
    "copied as the note writes them (names, titles, addresses, amounts). Leave a field "
    "out when the note does not say it; never guess, never describe. Dates are "
    "YYYY-MM-DD; numbers are plain (120000, not $120k). Answer with one JSON object."
)


def page_key(draft: Draft) -> str:
    return f"{draft.folder}/{draft.title}"


def _hint(spec: FieldSpec, schema: Schema) -> str:
    if spec.is_link and spec.folder:
        kind = schema.folder(spec.folder).type
        return f"{'names' if spec.type == 'links' else 'the name'} of a {kind}"
    if spec.type == "enum":
        return f"one of {', '.join(spec.values)}"
    if spec.type == "date":
        return "YYYY-MM-DD"
    if spec.description:
        return " ".join(spec.description.split())[:60]
    return spec.type


class FillRequest:
    """One note's fill question: the pages, their empty fields, the schema, the prompt."""

    def __init__(
        self,
        schema: Schema,
        source: Source,
        rules: Extraction,
        named: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.schema = schema
        self.source = source
        self.pages: dict[str, tuple[Draft, tuple[FieldSpec, ...]]] = {}
        ordered = sorted(rules.drafts, key=lambda d: is_dated(schema.folder(d.folder)))
        for draft in ordered:
            folder = schema.folder(draft.folder)
            empty = tuple(
                s for s in folder.fields if draft.page.fields.get(s.name) in (None, "", [])
            )
            if empty and page_key(draft) not in self.pages and len(self.pages) < MAX_PAGES:
                self.pages[page_key(draft)] = (draft, empty)
        self.rivals = _named_pages(schema, rules.drafts, named)

    def json_schema(self) -> dict[str, Any]:
        properties = {}
        for key, (draft, empty) in self.pages.items():
            fields = folder_json_schema(self.schema.folder(draft.folder))["properties"]
            properties[key] = {
                "type": "object",
                "properties": {s.name: fields[s.name] for s in empty},
                "additionalProperties": False,
            }
        return {"type": "object", "properties": properties, "additionalProperties": False}

    def excerpt(self, text: str, limit: int) -> str:
        """The paragraphs and list items of ``text`` that name an entity page asked about
        (a value about an entity must stand next to its name to be kept, see
        ``ingest_agent.llm.grounding``), at most ``limit`` characters; the note's start when
        none does. A short prompt is most of a small model's time."""
        names = set()
        for draft, _ in self.pages.values():
            if not is_dated(self.schema.folder(draft.folder)):
                for name in (draft.title, *draft.page.aliases):
                    names |= {norm(name), *norm(name).split()[:1]}
        names = {n for n in names if len(n) >= 3}
        kept = [
            b
            for b in blocks(text)
            if names & set(norm(b).split())
            or any(f" {n} " in f" {norm(b)} " for n in names if " " in n)
        ]
        chosen = "\n".join(kept) if kept else text
        return chosen[:limit]

    def messages(self, data_rule: str, quoted: str) -> list[dict[str, Any]]:
        groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for draft, empty in self.pages.values():
            fields = tuple(f"{s.name} ({_hint(s, self.schema)})" for s in empty)
            groups.setdefault((draft.folder, fields), []).append(draft.title)
        lines = [
            f"- {folder}/: {', '.join(titles)}; fields: {', '.join(fields)}"
            for (folder, fields), titles in groups.items()
        ]
        user = (
            f"Note: {self.source.path}, dated {self.source.doc_date.isoformat()}\n"
            'Pages (answer keyed "folder/Title", e.g. "'
            + next(iter(self.pages))
            + '"), and the fields to fill when the note states them:\n'
            + "\n".join(lines)
            + f"\n\n{quoted}"
        )
        return [
            {"role": "system", "content": SYSTEM.format(data=data_rule)},
            {"role": "user", "content": user},
        ]

    def apply(self, answer: Mapping[str, Any], rules: Extraction, grounds: Grounds) -> Extraction:
        """``rules`` with the answer's checked values filled in (see the module docstring)."""
        dropped: list[str] = []
        values: dict[str, dict[str, Any]] = {}
        for key, raw in answer.items():
            if key not in self.pages or not isinstance(raw, Mapping):
                continue
            draft, empty = self.pages[key]
            folder = self.schema.folder(draft.folder)
            kept, lost = self._checked(raw, empty, folder, draft, grounds, key)
            dropped += lost
            if kept:
                values[key] = kept
        drafts, filled = [], dict(rules.filled)
        for draft in rules.drafts:
            extra = values.get(page_key(draft), {})
            page = draft.page
            fresh = {k: v for k, v in extra.items() if page.fields.get(k) in (None, "", [])}
            if fresh:
                page = replace(page, fields={**page.fields, **fresh})
                mark = (draft.folder, norm(draft.title))
                filled[mark] = filled.get(mark, frozenset()) | frozenset(fresh)
            drafts.append(Draft(draft.folder, page))
        return replace(
            rules,
            drafts=tuple(drafts),
            extractor="llm",
            dropped=(*rules.dropped, *dropped),
            filled=filled,
        )

    def _checked(
        self,
        raw: Mapping[str, Any],
        empty: Sequence[FieldSpec],
        folder: FolderSpec,
        draft: Draft,
        grounds: Grounds,
        key: str,
    ) -> tuple[dict[str, Any], list[str]]:
        specs = {s.name: s for s in empty}
        coerced: dict[str, Any] = {}
        dropped: list[str] = []
        for name, value in raw.items():
            spec = specs.get(str(name))
            if spec is None or value in (None, "", []):
                continue
            value = model_value(spec, value, self.source.doc_date, self.schema.tz)
            if value is None:
                dropped.append(f"{key}.fields.{name}: not a {spec.type}")
            else:
                coerced[str(name)] = value
        # An entity's value must stand next to its name; the note's own event is the note.
        names = (draft.title, *draft.page.aliases)
        if is_dated(folder):  # a meeting's project must be a project the note names
            about = About(names, folder.name, self.rivals, entity=False)
        else:
            wording = {
                v.verb: tuple(p.text for p in v.phrases if not p.name_first)
                for v in folder.link_verbs
            }
            about = About(names, folder.name, self.rivals, wording)
        kept, lost = grounds.fields(specs, coerced, key, about)
        return kept, dropped + lost


def _named_pages(
    schema: Schema, drafts: Sequence[Draft], existing: Iterable[tuple[str, str]]
) -> dict[str, frozenset[str]]:
    """By folder, the normalised titles and aliases of the pages the rules found in the
    note, of the pages their link fields name (a manager, a meeting's attendees) and of
    the ``existing`` pages (folder, title) the note's names resolve to."""
    named: dict[str, set[str]] = {}
    for folder, title in existing:
        named.setdefault(folder, set()).add(norm(title))
    for draft in drafts:
        named.setdefault(draft.folder, set()).update(
            norm(n) for n in (draft.title, *draft.page.aliases)
        )
        for spec in schema.folder(draft.folder).fields:
            value = draft.page.fields.get(spec.name)
            if spec.is_link and spec.folder and value:
                values = value if isinstance(value, list | tuple) else [value]
                named.setdefault(spec.folder, set()).update(norm(str(v)) for v in values)
    return {folder: frozenset(names) for folder, names in named.items()}
