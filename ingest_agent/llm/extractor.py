"""The model's extraction: the prompt, the answer's JSON Schema and the checks on it.

The model answers one JSON object under a JSON Schema compiled from the folders' fields
and sections (``answer_schema``), asked and retried as every task is
(``ingest_agent.llm.asking``). The answer is checked against the schema before anything
is used:

- an answer not shaped as asked (no ``pages`` list, a page without a title) gets
  **one retry** listing every problem, then ``ExtractionError``; an answer that is not
  JSON is retried once by the LLM client, then ``LLMUnusable``: the agent then reads
  that note with the rules extractor (``degraded: ["llm_unusable"]``), never failing
  it for the model's formatting;
- every value is checked against the note (``ingest_agent.llm.grounding``): a page named
  nowhere in it, an attendee it does not name, a date or number it does not state is
  dropped and counted;
- what the schema has no place for is dropped and listed in ``Extraction.dropped``
  (counted in the source's ledger entry), and the rest of the note is kept: a page in a
  folder the schema does not have, a field its folder does not have, an unknown
  section, a timeline entry on a folder without timeline, a value of the wrong type,
  an undatable entry.

With the small profile (``memserver.clients.profile``) the model does not write pages:
``fill`` asks it only for the fields the rules extractor left empty
(``ingest_agent.llm.fill``). ``LLMExtractor`` is also the agent's one handle on the model
for the other tasks: the section merge (``ingest_agent.llm.sections``) and the repair
(``ingest_agent.llm.repair``).

Relative dates are resolved against the source's document date (``resolve_date``), so
"yesterday" in a note of 2026-11-19 is 2026-11-18 whatever day the agent runs.
``<private>`` spans are redacted again before the text is put in a prompt, and the
source is quoted as data (``ingest_agent.llm.asking.DATA_RULE``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ingest_agent.extract.note import model_value
from ingest_agent.extract.text import resolve_date
from ingest_agent.llm.asking import folder_prompt, strings
from ingest_agent.llm.fill import FillRequest
from ingest_agent.llm.grounding import Grounds
from ingest_agent.llm.repair import PageRepair
from ingest_agent.llm.sections import SectionMerge
from ingest_agent.records import Draft, Extraction, Source, is_dated
from memserver.kb.page import Page, TimelineEntry, folder_json_schema
from memserver.kb.redact import redact_private
from memserver.kb.schema import FolderSpec, Schema

EXTRACTOR = "llm"
MAX_SOURCE_CHARS = 60_000
MAX_TITLES = 300


def answer_schema(schema: Schema) -> dict[str, Any]:
    """The JSON Schema of an extraction answer, restricted to the schema's folders and fields."""
    variants = []
    for folder in schema.folders:
        fields = folder_json_schema(folder)
        fields.pop("$schema", None)
        fields.pop("required", None)
        variants.append(
            {
                "type": "object",
                "properties": {
                    "folder": {"const": folder.name},
                    "title": {"type": "string", "minLength": 1},
                    "aliases": {"type": "array", "items": {"type": "string"}},
                    "fields": fields,
                    "sections": {
                        "type": "object",
                        "properties": {s: {"type": "string"} for s in folder.sections},
                        "additionalProperties": False,
                    },
                    "timeline": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "date": {"type": "string", "format": "date"},
                                "text": {"type": "string"},
                            },
                            "required": ["date", "text"],
                        },
                    },
                    "open_questions": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["folder", "title"],
            }
        )
    return {
        "type": "object",
        "properties": {"pages": {"type": "array", "items": {"oneOf": variants}}},
        "required": ["pages"],
    }


class LLMExtractor(SectionMerge, PageRepair):
    """The agent's model: extraction and fill here, the section merge and the repair from
    their modules, all through one ``LLMClient`` (see the module docstring)."""

    name = EXTRACTOR

    # -- extraction

    def system_prompt(self, source: Source) -> str:
        folders = "\n".join(folder_prompt(f) for f in self.schema.folders)
        return (
            "Task: extract\n"
            "You turn one source document into pages of a company knowledge base. Record "
            "only facts the source states.\n\n"
            f"{self.data_rule()}\n\n"
            "Resolve relative dates ('yesterday', 'last Friday', 'next Monday') against "
            "the document's date (given with the document), never against today. Write "
            "every date as YYYY-MM-DD.\n\n"
            f"Knowledge base rules:\n{self.schema.rules.strip() or '(none)'}\n\n"
            "Folders (only these exist; a page in another folder or a field not listed is "
            f"refused):\n{folders}\n\n"
            "Answer with one JSON object:\n"
            '{"pages": [{"folder": "<folder>", "title": "<name>", "aliases": ["<other names>"], '
            '"fields": {"<field>": <value>}, "sections": {"<Section>": "<markdown>"}, '
            '"timeline": [{"date": "YYYY-MM-DD", "text": "<what happened, one line>"}], '
            '"open_questions": ["<unresolved>"]}]}\n'
            "- One page for each person, company, project ... the source says something "
            "about, and one page for the event the source records (a meeting, a decision), "
            "if it records one.\n"
            "- Link fields hold the titles of the linked pages as the source writes them; "
            "list every attendee of a meeting.\n"
            "- Timeline entries only on folders that keep a timeline, each dated the day it "
            "happened.\n"
            "- Leave out a field the source does not state; never guess.\n\n"
            "JSON Schema of the answer:\n"
            f"{json.dumps(answer_schema(self.schema), ensure_ascii=False)}"
        )

    def user_prompt(self, source: Source, hint: Sequence[str], titles: Sequence[str]) -> str:
        known = ", ".join(titles[: min(MAX_TITLES, self.profile.titles)]) or "(none yet)"
        text = redact_private(source.content)[: min(MAX_SOURCE_CHARS, self.profile.source_chars)]
        return (
            f"Source: {source.path}\nDocument date: {source.doc_date.isoformat()} (resolve "
            "relative dates against it)\n"
            f"Folders the router suggests: {', '.join(hint) or '(no suggestion)'}\n"
            f"Existing pages (reuse these titles when the source means them): {known}\n\n"
            f"{self.quote(text)}"
        )

    def extract(
        self,
        source: Source,
        hint: Sequence[str] = (),
        titles: Sequence[str] = (),
        resolved: Iterable[str] = (),
    ) -> Extraction:
        """The note's pages as the model writes them, every value checked against the note
        (``resolved``: titles of the pages the note's names resolve to)."""
        messages = [
            {"role": "system", "content": self.system_prompt(source)},
            {"role": "user", "content": self.user_prompt(source, hint, titles)},
        ]
        grounds = self._grounds(source, titles, resolved)
        drafts, dropped = self.ask(
            "extraction",
            messages,
            lambda answer: self.parse(answer, source, grounds),
            answer_schema(self.schema),
        )
        return Extraction(tuple(drafts), EXTRACTOR, tuple(dropped))

    def fill(
        self,
        source: Source,
        rules: Extraction,
        titles: Sequence[str] = (),
        resolved: Iterable[str] = (),
        named: Iterable[tuple[str, str]] = (),
    ) -> Extraction:
        """The small profile: ``rules`` with the fields it left empty filled by the model
        (``ingest_agent.llm.fill``); the rules' extraction as is when none are empty.
        ``named``: (folder, title) of the existing pages the note's names resolve to."""
        request = FillRequest(self.schema, source, rules, named)
        if not request.pages:
            return rules
        text = request.excerpt(redact_private(source.content), self.profile.source_chars)
        messages = request.messages(self.data_rule(), self.quote(text))
        answer = self.timed(
            # apply() keeps only what was asked and checks every value: no repair round
            lambda: self.client.chat_structured(
                messages,
                request.json_schema(),
                name="fill",
                max_tokens=self.profile.max_tokens,
                validate=False,
            )
        )
        return request.apply(answer, rules, self._grounds(source, titles, resolved))

    def _grounds(self, source: Source, titles: Sequence[str], resolved: Iterable[str]) -> Grounds:
        text = redact_private(source.content)
        return Grounds(text, source.doc_date, self.schema.tz, titles, resolved)

    def parse(
        self, answer: Mapping[str, Any], source: Source, grounds: Grounds | None = None
    ) -> tuple[list[Draft], list[str], list[str]]:
        """(drafts, dropped, problems) of an extraction answer; with ``grounds`` every
        value is checked against the note."""
        problems: list[str] = []
        dropped: list[str] = []
        items = answer.get("pages")
        if not isinstance(items, list):
            return [], dropped, ["the answer has no 'pages' list"]
        names = self.schema.folder_names
        drafts = []
        for index, item in enumerate(items):
            at = f"pages[{index}]"
            if not isinstance(item, Mapping):
                problems.append(f"{at}: not an object")
                continue
            folder_name = str(item.get("folder") or "")
            if folder_name not in names:
                title = " ".join(str(item.get("title") or "").split())[:80]
                dropped.append(f"{at}: no folder {folder_name!r} in the schema (page {title!r})")
                continue
            folder = self.schema.folder(folder_name)
            title = " ".join(str(item.get("title") or "").split())
            if not title:
                problems.append(f"{at}.title: missing; give the page's name")
                continue
            if grounds is not None and not is_dated(folder) and not grounds.names(title):
                dropped.append(f"{at}: the note names no {title[:80]!r} ({folder_name})")
                continue
            fields = item.get("fields") or {}
            if not isinstance(fields, Mapping):
                problems.append(f"{at}.fields: must be an object of field: value")
                continue
            unknown = [k for k in fields if folder.field(str(k)) is None]
            dropped.extend(f"{at}.fields.{k}: no field {k!r} in {folder_name}" for k in unknown)
            known = {k: v for k, v in fields.items() if k not in unknown}
            page = self._page(item, folder, title, known, source, at, dropped, problems, grounds)
            if page is not None:
                drafts.append(Draft(folder_name, page))
        return drafts, dropped, problems

    def _page(
        self,
        item: Mapping[str, Any],
        folder: FolderSpec,
        title: str,
        fields: Mapping[str, Any],
        source: Source,
        at: str,
        dropped: list[str],
        problems: list[str],
        grounds: Grounds | None = None,
    ) -> Page | None:
        values: dict[str, Any] = {}
        for key, value in fields.items():
            spec = folder.field(str(key))
            assert spec is not None
            if value is None or value == "" or value == []:
                continue
            coerced = model_value(spec, value, source.doc_date, self.schema.tz)
            if coerced is None:
                dropped.append(f"{at}.fields.{key}: {value!r} is not a {spec.type}")
            else:
                values[str(key)] = coerced
        if grounds is not None:
            specs = {k: spec for k in values if (spec := folder.field(k)) is not None}
            values, lost = grounds.fields(specs, values, at)
            dropped.extend(lost)
        sections_raw = item.get("sections") or {}
        if not isinstance(sections_raw, Mapping):
            problems.append(f"{at}.sections: must be an object of heading: markdown")
            return None
        sections = {}
        for heading, body in sections_raw.items():
            if heading in folder.sections and isinstance(body, str):
                sections[heading] = body
            else:
                dropped.append(f"{at}.sections.{heading}: not a section of {folder.name}")
        timeline = []
        for index, entry in enumerate(item.get("timeline") or []):
            if not isinstance(entry, Mapping) or not str(entry.get("text") or "").strip():
                dropped.append(f"{at}.timeline[{index}]: no text")
                continue
            day = resolve_date(entry.get("date"), source.doc_date, self.schema.tz)
            if day is None or not folder.timeline:
                why = "no date" if day is None else f"{folder.name} keeps no timeline"
                dropped.append(f"{at}.timeline[{index}]: {why}")
                continue
            if grounds is not None and not grounds.states_day(day):
                dropped.append(f"{at}.timeline[{index}]: {day} is a date the note does not state")
                continue
            timeline.append(TimelineEntry(day, str(entry["text"]), source.path))
        return Page(
            title=title,
            type=folder.type,
            fields=values,
            aliases=tuple(strings(item.get("aliases"))),
            sources=(source.path,),
            sections=sections,
            timeline=tuple(timeline),
            open_questions=tuple(strings(item.get("open_questions"))),
        )
