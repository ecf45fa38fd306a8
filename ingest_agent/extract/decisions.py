"""Decision pages from a note, read by the rules extractor (no model).

Where a decision is read:

- a note's **Decisions** section ("## Decisions", "## Шийдвэрүүд"): each list item with a
  bold lead is one decision (the lead is its title); an item without one adds to the
  decision before it, or is a decision of its own when no item has a bold lead; an item
  "Decided by X, Y and Z" names the deciders of the section's decisions;
- elsewhere, when the note has no such section: a sentence whose verb decides ("we
  decided to", "agreed to", "approved", "will move to", "шийдвэрлэв", "тохиролцов"),
  :func:`ingest_agent.extract.decision_words.deciding`;
- a decision record (the note's own page is in the decisions folder) is one decision:
  its provenance is filled from its text ("Decided by", "we compared", a "Why ..."
  section).

Each decision page is dated the day decided (the note's date, the meeting's date, or
"decided on <date>"), ``accepted``, with ``decided_by``, ``decided_on``,
``alternatives``, ``rationale`` and links to the companies and projects its words name
(else the meeting's), when the folder has those fields. A decision that says it reverses
or supersedes an earlier one, or amends one (:mod:`ingest_agent.extract.corrections`),
becomes a :class:`~ingest_agent.records.DecisionRef`; the agent finds the earlier page and
records the reversal or amendment on both (:mod:`ingest_agent.pages.reversals`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from ingest_agent.extract import corrections, decision_labels
from ingest_agent.extract import decision_words as words
from ingest_agent.extract.dates import day_mentions
from ingest_agent.extract.note import Known, NoteBody, tidy_title
from ingest_agent.extract.page_builds import Builds, PageBuild, entity_names
from ingest_agent.extract.prose_patterns import NotePeople
from ingest_agent.extract.text import full_name, marked_blocks, name_candidates, plain
from ingest_agent.names import norm
from ingest_agent.records import (
    AMENDED,
    DecisionRef,
    Source,
    is_dated,
    lifecycle_field,
    supersede_fields,
)
from memserver.kb.page import as_date
from memserver.kb.schema import FieldSpec, FolderSpec, Schema
from memserver.timeparse.parse import parse_time

TITLE_WORDS = 12
ACCEPTED = "accepted"
DECIDERS = ("decided_by", "deciders", "approved_by")
DECIDED_ON = ("decided_on", "decision_date")
ALTERNATIVES = ("alternatives", "options", "alternatives_considered")
RATIONALE = ("rationale", "reason", "why")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<rest>.*)$")
_BOLD_LEAD = re.compile(r"^\*\*(?P<lead>[^*]+?)\*\*")
_LABEL_LEAD = re.compile(r"^\*\*[^*]+\*\*\s*:|^\*\*[^*]+:\*\*")  # a bold label and a colon
_ATTRIBUTION = re.compile(r"^(?:decided|approved|agreed|signed\s+off)\s+(?:on\s+)?by\b", re.I)
_DECIDED_ON = re.compile(
    r"\b(?:decided|agreed|approved|signed\s+off)\b[^.;]{0,40}?\bon\s+(?P<day>[^.;,]{4,30})",
    re.IGNORECASE,
)
_WHERE = re.compile(r"^\s+(?:at|in|during|on)\s+(?:the\s+|our\s+|yesterday)", re.IGNORECASE)
_WE = re.compile(r"\b(?:we|i|we['’]ve|i['’]ve|we['’]re|i['’]m)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
_BY_ONLY = re.compile(r"^\s*(?:on\s+)?by\b", re.IGNORECASE)  # "approved by X": who, not what
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")
_WHY_HEADING = re.compile(r"^(?:why|rationale|reasons?|яагаад|шалтгаан)\b", re.IGNORECASE)


def decision_folder(schema: Schema) -> FolderSpec | None:
    """The folder of decisions: dated, with a lifecycle field and a supersede link."""
    for spec in schema.folders:
        if is_dated(spec) and lifecycle_field(spec) is not None and supersede_fields(spec):
            return spec
    return None


def named_field(folder: FolderSpec, names: Sequence[str], types: Sequence[str]) -> FieldSpec | None:
    for name in names:
        spec = folder.field(name)
        if spec is not None and spec.type in types:
            return spec
    return None


@dataclass
class _Decision:
    title: str
    lines: list[str] = field(default_factory=list)  # its words, plain
    lead: str = ""  # the words its links are read from (not the lines added to it)
    day: dt.date | None = None  # the day its words say it was decided
    why: str | None = None  # a reason given apart from its words (a "Reason:" line)
    alternatives: list[str] = field(default_factory=list)  # options given apart

    @property
    def text(self) -> str:
        return " ".join(self.lines)


def read_decisions(
    schema: Schema,
    source: Source,
    body: NoteBody,
    primary: PageBuild | None,
    builds: Builds,
    known: Known,
    people: Mapping[str, NotePeople],
) -> list[DecisionRef]:
    """Decision pages of the note into ``builds``; the reversals they state."""
    folder = decision_folder(schema)
    if folder is None:
        return []
    text = "\n".join(body.lines)
    local = _people(folder, people)
    if primary is not None and primary.folder is folder:
        return _record(folder, source, text, primary, local, known, schema.tz)
    default = source.doc_date
    if primary is not None and primary.folder.date_field:
        default = as_date(primary.fields.get(primary.folder.date_field)) or default
    section, attribution = _section(body.lines, default, schema.tz)
    found = section if section else _prose(text, default, schema.tz)
    author = body.front.get("author")
    writer = author.strip() if isinstance(author, str) and author.strip() else None
    refs: list[DecisionRef] = []
    names = entity_names(schema, builds, known)
    tz = schema.tz
    first: PageBuild | None = None
    for decision in found:
        build = _build(folder, source, decision, attribution, primary, names, local, known, tz)
        _writer_decided(folder, build, decision, writer, local, known)
        key = (folder.name, norm(build.title))
        if key in builds:
            continue
        builds[key] = build
        first = first or build
        ref = _ref(folder, source, build, decision.text, tz)
        if ref is None and not any(r.status == AMENDED for r in refs):  # one amendment a note
            ref = corrections.amendment(folder, source, build, decision.text, text, tz)
        if ref is not None:
            refs.append(ref)
    if not refs and first is not None:  # "this clarification supersedes the earlier decision"
        ref = corrections.amendment(folder, source, first, "", text, tz, whole_note=True)
        refs += [ref] if ref is not None else []
    return refs


def _people(folder: FolderSpec, people: Mapping[str, NotePeople]) -> NotePeople | None:
    spec = named_field(folder, DECIDERS, ("links", "link"))
    return people.get(spec.folder) if spec is not None and spec.folder else None


def _section(lines: Sequence[str], default: dt.date, tz: ZoneInfo) -> tuple[list[_Decision], str]:
    """The decisions of the note's Decisions section, and its attribution line."""
    raws = _section_items(lines)
    labelled = decision_labels.record(raws)
    if labelled is not None:  # one decision written as labelled lines
        return [_labelled(labelled, default, tz)], labelled.attribution
    items = [(raw, bool(_BOLD_LEAD.match(raw))) for raw in raws]  # (raw, has a bold lead)
    attribution = " ".join(plain(raw) for raw, _ in items if _ATTRIBUTION.match(plain(raw)))
    any_lead = any(lead for _, lead in items)
    out: list[_Decision] = []
    for raw, lead in items:
        flat = plain(raw)
        if _ATTRIBUTION.match(flat):
            continue
        if any_lead and not lead and out:
            out[-1].lines.append(flat)
            continue
        bold = _BOLD_LEAD.match(raw)
        if bold is not None and _LABEL_LEAD.match(raw):  # "**Security**: Daniel will ...":
            title = _title(flat, tz=tz)  # the lead labels the decision, its words say it
        elif bold is not None:
            title = _title(bold.group("lead"), lead=True, tz=tz)
        else:
            title = _title(flat, tz=tz)
        if title:
            out.append(_Decision(title, [flat], flat))
    return out, attribution


def _section_items(lines: Sequence[str]) -> list[str]:
    """The Decisions section's items: each list item's raw text with its continuation
    lines; a paragraph after a blank line is an item of its own; tables are skipped and a
    rule (``---``) or a heading at the section's level or above ends it."""
    inside, level, gap = False, 0, False
    raws: list[str] = []
    for line in lines:
        heading = _HEADING.match(line)
        if heading is not None:
            if inside and len(heading.group(1)) <= level:
                break
            if not inside and _decisions_heading(heading.group(2)):
                inside, level = True, len(heading.group(1))
            continue
        if not inside:
            continue
        if not line.strip():
            gap = True
            continue
        if _RULE.match(line) and raws:
            break
        if line.lstrip().startswith("|") or _RULE.match(line):
            continue
        item = _ITEM.match(line)
        if item is not None or not raws or gap:
            raws.append(item.group("rest").strip() if item is not None else line.strip())
        else:
            raws[-1] = f"{raws[-1]} {line.strip()}"
        gap = False
    return raws


def _decisions_heading(text: str) -> bool:
    """ "Decisions", "Key decisions", "Sprint Planning Decisions", "Decisions made",
    "Шийдвэрүүд": a heading whose last word (or the one before "made"/"taken"/"log")
    says decisions; not "Decision Authority Matrix" or a document's title."""
    key = [w for w in norm(plain(text)).split() if not w.isdigit()]
    while key and key[-1] in ("made", "taken", "log", "reached", "гаргасан"):
        key = key[:-1]
    return bool(key) and len(key) <= 4 and key[-1].startswith(("decision", "decided", "шийдвэр"))


def _labelled(found: decision_labels.Record, default: dt.date, tz: ZoneInfo) -> _Decision:
    """One decision from its labelled lines: the outcome is its title and its words."""
    text = found.outcome.rstrip(" .") + "."
    decision = _Decision(_title(found.outcome, tz=tz), [text, *found.rest], text)
    decision.why = found.why or None
    decision.alternatives = found.alternatives
    days = day_mentions(found.day, default, tz) if found.day else []
    decision.day = next((m.day for m in days if m.day <= default), None)
    return decision


def _prose(text: str, default: dt.date, tz: ZoneInfo) -> list[_Decision]:
    """Sentences whose verb decides; "(decided at the review)" after a clause makes the
    clause the decision, dated the day that phrase (or the words before the verb) names."""
    out = []
    for block in marked_blocks(text):
        for sentence in re.split(r"(?<=[.!])\s+", block.text):
            match = words.deciding(sentence)
            if match is None or sentence.rstrip().endswith("?"):
                continue
            before, after = sentence[: match.start()], sentence[match.end() :]
            if match.group(0).lower().startswith(("шийд", "тохир", "бат")):
                what = before.rsplit(",", 1)[-1]
            elif _WHERE.match(after):  # "X moved to Y (decided at the roadmap review)"
                what = re.split(r"\s*[(—–]\s*$", before.rstrip())[0]
                what = re.sub(r"\s*[(—–]\s*$", "", what)
            else:
                what = re.split(
                    r"\b(?:because|due to|driven by|instead of|rather than|since)\b|[;(]|,(?=\s)",
                    after,
                )[0]
            title = _title(what, tz=tz)
            if not title or len(title.split()) < 2 or words.logistics(what) or _BY_ONLY.match(what):
                continue
            days = [m.day for m in day_mentions(before, default, tz) if m.day <= default]
            if _WHERE.match(after):
                days += [m.day for m in day_mentions(after[:60], default, tz) if m.day <= default]
            decision = _Decision(title, [sentence], sentence)
            decision.day = days[-1] if days else None
            out.append(decision)
    return out


def _title(text: str, *, lead: bool = False, tz: ZoneInfo | None = None) -> str:
    """A decision's title: what was decided, from its bold lead (to a bracket or a
    sentence's end), else the first clause of its words. A label says nothing alone: a
    lead or a clause that is only a label ("**Security**: Daniel will run ...", "Pilot
    fee: 1,500,000₮") keeps the words after it. A day named relative to the note
    ("yesterday") says nothing out of it and goes; what is left of markup, a clock time,
    a date or an amount alone is no title ("")."""
    flat = plain(text)
    cut_at = r"\s*(?:\(|\.\s|\.$)" if lead else r"\s*(?:[:;(]|\.\s|\.$|\s[—–]\s)"
    head = re.split(cut_at, flat, maxsplit=1)[0]
    label, colon, value = flat.partition(":")
    if not lead and colon and head == label.strip() and len(label.split()) <= 3:
        # "Pilot fee: 1,500,000₮, one-off": a label alone says nothing, its value does
        rest = re.split(r"\s*(?:[;(]|\.\s|\.$)", value, maxsplit=1)[0].strip()
        head = f"{label.strip()}: {rest}" if rest else head
    head = re.sub(r"^(?:to|that|on|the|a|an)\s+", "", head.strip(), flags=re.IGNORECASE)
    if tz is not None:
        head = _without_relative_day(head, tz)
    title = tidy_title(head, TITLE_WORDS)
    words = re.findall(r"[^\W\d_]{2,}", re.sub(r"[$€£₮]\s?\d[\d,.]*", " ", title))
    return title if words else ""


def _without_relative_day(text: str, tz: ZoneInfo) -> str:
    """``text`` without a day it names relative to when it was said ("yesterday", "last
    Friday"); a date written out stays."""
    found = parse_time(text, now=dt.datetime(2000, 1, 3, 12, tzinfo=tz), tz=tz).phrase
    if found and not re.search(r"\d", found):
        text = re.sub(rf"(?i)\s*\b{re.escape(found)}\b", "", text, count=1)
    return text


def _day(text: str, default: dt.date, tz: ZoneInfo) -> dt.date:
    """The day decided: "decided on <day>" in the words, else ``default``."""
    match = _DECIDED_ON.search(text)
    if match is not None:
        days = day_mentions(match.group("day"), default, tz)
        if days:
            return days[0].day
    return default


def _resolved(names: Sequence[str], local: NotePeople | None, known: Known) -> list[str]:
    out: list[str] = []
    for name in names:
        hit = known.get(norm(name))
        title = hit[1] if hit is not None else None
        title = title or (local.person(name) if local is not None else None) or full_name(name)
        if title and title not in out:
            out.append(title)
    return out


def _build(
    folder: FolderSpec,
    source: Source,
    decision: _Decision,
    attribution: str,
    primary: PageBuild | None,
    names: Mapping[str, tuple[str, str]],
    local: NotePeople | None,
    known: Known,
    tz: ZoneInfo,
) -> PageBuild:
    assert folder.date_field is not None
    default = source.doc_date
    if primary is not None and primary.folder.date_field:
        default = as_date(primary.fields.get(primary.folder.date_field)) or default
    text = decision.text
    day = decision.day or _day(f"{text} {attribution}", default, tz)
    about = _about(primary, folder)
    build = PageBuild(folder, decision.title)
    build.fields[folder.date_field] = day.isoformat()
    life = lifecycle_field(folder)
    if life is not None and ACCEPTED in life.values:
        build.fields[life.name] = ACCEPTED
    _provenance(folder, build, text, attribution, day, local, known, decision.why)
    alts = named_field(folder, ALTERNATIVES, ("list", "string", "text"))
    if alts is not None and decision.alternatives and alts.name not in build.fields:
        given = decision.alternatives
        build.fields[alts.name] = given if alts.type == "list" else "; ".join(given)
    borrowed: set[str] = set()  # link values taken from the note's page, not the words
    for spec in folder.fields:  # the companies and projects its words name, else the note's
        if spec.type not in ("link", "links") or spec.folder in (None, folder.name):
            continue
        if spec.name in build.fields:
            continue
        hits = [
            hit[1]
            for run in name_candidates(decision.lead)
            if (hit := _named(names, run)) is not None and hit[0] == spec.folder
        ]
        if not hits and primary is not None:
            same = next((f for f in primary.folder.fields if f.folder == spec.folder), None)
            value = primary.fields.get(same.name) if same is not None and same.is_link else None
            if isinstance(value, str) and spec.folder != _deciders_folder(folder):
                hits = [value]
                borrowed.add(value)
        if hits and spec.folder != _deciders_folder(folder):
            build.fields[spec.name] = list(dict.fromkeys(hits)) if spec.type == "links" else hits[0]
    if about is None and primary is None:  # a message's or a document's decision: the
        about = next(  # page its words name says whose it is ("Номин Трейд: 850₮ discount")
            (
                value
                for spec in folder.fields
                if spec.type == "link"
                and spec.folder not in (None, folder.name, _deciders_folder(folder))
                and isinstance(value := build.fields.get(spec.name), str)
            ),
            None,
        )
        borrowed.add(about or "")
    if about is not None and about in borrowed and norm(about) not in norm(build.title):
        build.title = f"{about}: {build.title}"  # "Номин Трейд: Үнэ ..." says whose price it is
    section = "Decision" if "Decision" in folder.sections else (folder.sections or [None])[0]
    if section is not None:
        build.sections[section] = text
    if primary is not None and about and "Context" in folder.sections and section != "Context":
        where = f"{primary.folder.type.capitalize()} “{primary.title}”"
        build.sections["Context"] = f"{where} with {about}, {day}."
    return build


def _named(names: Mapping[str, tuple[str, str]], run: str) -> tuple[str, str] | None:
    """The page a name run is, also with a Mongolian case ending after a hyphen
    ("Initech-ийн") or a possessive ("Initech's")."""
    run = re.sub(r"['’]s$", "", run)
    return names.get(norm(run)) or names.get(norm(re.sub(r"-[а-яёөү]+$", "", run)))


def _writer_decided(
    folder: FolderSpec,
    build: PageBuild,
    decision: _Decision,
    writer: str | None,
    local: NotePeople | None,
    known: Known,
) -> None:
    """ "We decided ..." / "I decided ..." in a note its frontmatter says who wrote: the
    writer is one of the deciders (when the words name none)."""
    deciders = named_field(folder, DECIDERS, ("links", "link"))
    if writer is None or deciders is None or deciders.name in build.fields:
        return
    match = words.deciding(decision.text)
    if match is None or not _WE.search(decision.text[: match.start()]):
        return
    people = _resolved([writer], local, known) or [writer]
    build.fields[deciders.name] = people if deciders.type == "links" else people[0]


def _about(primary: PageBuild | None, folder: FolderSpec) -> str | None:
    """The one company (any entity but a person) the note's own page is about: its first
    single link, as a meeting's ``company``."""
    if primary is None:
        return None
    people = _deciders_folder(folder)
    for spec in primary.folder.fields:
        value = primary.fields.get(spec.name)
        if spec.type == "link" and spec.folder not in (None, people) and isinstance(value, str):
            return value
    return None


def _deciders_folder(folder: FolderSpec) -> str | None:
    spec = named_field(folder, DECIDERS, ("links", "link"))
    return spec.folder if spec is not None else None


def _provenance(
    folder: FolderSpec,
    build: PageBuild,
    text: str,
    attribution: str,
    day: dt.date,
    local: NotePeople | None,
    known: Known,
    why: str | None = None,
) -> None:
    """decided_by, decided_on, alternatives, rationale: only what the words say."""
    deciders = named_field(folder, DECIDERS, ("links", "link"))
    if deciders is not None and deciders.name not in build.fields:
        people = _resolved(words.deciders(f"{attribution} {text}".strip()), local, known)
        if people:
            build.fields[deciders.name] = people if deciders.type == "links" else people[0]
    on = named_field(folder, DECIDED_ON, ("date",))
    if on is not None and on.name not in build.fields:
        build.fields[on.name] = day.isoformat()
    alts = named_field(folder, ALTERNATIVES, ("list", "string", "text"))
    title = norm(build.title)
    found = [a for a in words.alternatives(text) if norm(a) not in title]
    if alts is not None and found and alts.name not in build.fields:
        build.fields[alts.name] = found if alts.type == "list" else "; ".join(found)
    reason = named_field(folder, RATIONALE, ("text", "string"))
    because = why or words.rationale(text)
    if reason is not None and because and reason.name not in build.fields:
        build.fields[reason.name] = because


def _record(
    folder: FolderSpec,
    source: Source,
    text: str,
    primary: PageBuild,
    local: NotePeople | None,
    known: Known,
    schema_tz: ZoneInfo,
) -> list[DecisionRef]:
    """A decision record: its provenance, and the reversal it states."""
    assert folder.date_field is not None
    day = as_date(primary.fields.get(folder.date_field)) or source.doc_date
    why = [b.text.rstrip(" .") for b in marked_blocks(text) if _WHY_HEADING.match(b.heading)]
    flat = " ".join(b.text for b in marked_blocks(text) if not _WHY_HEADING.match(b.heading))
    _provenance(folder, primary, flat, "", day, local, known, "; ".join(why) or None)
    life = lifecycle_field(folder)
    if life is not None and life.name not in primary.fields and ACCEPTED in life.values:
        primary.fields[life.name] = ACCEPTED
    ref = _ref(folder, source, primary, flat, schema_tz)
    ref = ref or corrections.amendment(folder, source, primary, flat, flat, schema_tz)
    return [ref] if ref is not None else []


def _ref(
    folder: FolderSpec, source: Source, build: PageBuild, text: str, tz: ZoneInfo
) -> DecisionRef | None:
    """The earlier decision ``text`` says this one reverses or supersedes, if any."""
    found = None
    for block in marked_blocks(text):
        for sentence in re.split(r"(?<=[.!])\s+(?=[A-ZА-ЯЁӨҮ])", block.text):
            found = words.reversal(sentence)
            if found is not None:
                break
        if found is not None:
            break
    if found is None:
        return None
    assert folder.date_field is not None
    day = as_date(build.fields.get(folder.date_field)) or source.doc_date
    mentioned = [m.day for m in day_mentions(found.sentence, source.doc_date, tz) if m.day != day]
    reason = named_field(folder, RATIONALE, ("text", "string"))
    why = build.fields.get(reason.name) if reason is not None else None
    return DecisionRef(
        folder=folder.name,
        title=build.title,
        day=day,
        quoted=found.quoted,
        on=mentioned[0] if mentioned else None,
        words=found.words,
        status=found.status,
        reason=str(why or ""),
        source=source.path,
    )
