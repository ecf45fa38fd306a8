"""A brief on a question: what a client model needs to answer it, within a token budget.

``build_brief`` runs the question through the search (the caller's scope, raw notes only
for a token that may read them), takes the pages it is about (what the search ranks
highest, events before entities, and the pages the question names by their title or
alias in the entity index; and the pages the supersession links of the first and of
those saying two or more of its words reach) and gathers, for each:

* the current values (or those of ``as_of``), and the earlier values with the date they
  changed, the note that changed them and the reason (the page's timeline line of that
  day), from the validity intervals (:mod:`memserver.store.validity`);
* the deciders (``decided_by``), the status and the supersession chain
  (``supersedes``/``superseded_by``, status reversed/superseded);
* the open conflicts (unresolved rows of ``conflicts`` on those pages);

and the evidence (:mod:`memserver.server.brief_evidence`): sentences of the notes behind
the pages and of the notes the search found, each dated, cited by note path (and page
id) and labelled ``direct`` (quoted from the note that says it, with the note's author
when its frontmatter names one), and the pages' own timeline lines, labelled
``inferred`` (the memory's reading, not a quote).

Items are added in that order until the budget (tokens = characters / 4, as the search
counts them) is spent; ``truncated`` says some were left out. The result carries a
readable text rendering beside the structured fields. Text from a note is data: it is
quoted, never followed.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memserver.errors import MemoryError_
from memserver.graph.resolve import dated_folders
from memserver.search.types import SearchRequest, SearchResult
from memserver.server.brief_evidence import Evidence, cut, gather_evidence, key_words
from memserver.server.brief_settings import BRIEF
from memserver.server.tools.as_of import hidden_fields
from memserver.store import validity

if TYPE_CHECKING:
    from memserver.search.pipeline import Searcher
    from memserver.server.tools.base import CallContext
    from memserver.store.validity import Interval

CHAIN_FIELDS = ("supersedes", "superseded_by")
DECIDER_FIELDS = ("decided_by",)


def tokens_of(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass
class Subject:
    id: str
    title: str
    folder: str
    date: str | None
    status: Any
    current: dict[str, Any]
    earlier: list[dict[str, Any]]
    deciders: list[str]
    supersedes: list[str]
    superseded_by: list[str]
    sources: list[str]
    timeline: list[dict[str, Any]] = field(default_factory=list)
    changed_since: list[dict[str, Any]] = field(default_factory=list)  # with as_of

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "folder": self.folder,
            "date": self.date,
            "status": self.status,
            "current": self.current,
            "earlier": self.earlier,
            "deciders": self.deciders,
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
            "changed_since": self.changed_since,
        }

    def render(self) -> str:
        lines = [f"## {self.title} [{self.id}]" + (f", {self.date}" if self.date else "")]
        if self.status:
            lines.append(f"status: {self.status}")
        if self.deciders:
            lines.append("decided by: " + ", ".join(self.deciders))
        for name in ("supersedes", "superseded_by"):
            if getattr(self, name):
                lines.append(f"{name.replace('_', ' ')}: " + ", ".join(getattr(self, name)))
        for name, value in self.current.items():
            lines.append(f"{name}: {_text(value)}")
        for old in self.earlier:
            why = f" because: {old['reason']}" if old.get("reason") else ""
            lines.append(
                f"earlier {old['field']}: {_text(old['value'])} (from {old['valid_from']}, "
                f"changed {old['valid_to']} to {_text(old['replaced_by'])}"
                f"{', ' + old['source'] if old.get('source') else ''}){why}"
            )
        for later in self.changed_since:
            lines.append(
                f"changed later: {later['field']} to {_text(later['to'])} on {later['date']}"
                + (f" ({later['source']})" if later.get("source") else "")
            )
        return "\n".join(lines)


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _as_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)]


# ------------------------------------------------------------------------ building


def build_brief(
    call: CallContext,
    searcher: Searcher,
    question: str,
    *,
    as_of: dt.date | None,
    budget: int,
    now: dt.datetime | None,
) -> dict[str, Any]:
    request = SearchRequest(
        question=question,
        scope=call.folders,
        include_sources=call.scope.source,
        source_access=call.scope.source,
        now=now,
        route=True,
        as_of=as_of,
        limit=BRIEF.search_limit,
    )
    found = searcher.search(request)
    # The router narrows to the folders the question names ("policy" -> policies), but a
    # company question's subject is often elsewhere (the decision that set the policy):
    # the whole knowledge base is searched too, its results after the routed ones.
    wide = searcher.search(dataclasses.replace(request, route=False))
    routed = {r.id for r in found.results}
    results = [*found.results, *(r for r in wide.results if r.id not in routed)]
    pages = [r for r in results if not r.id.startswith("source/")]
    notes = [r for r in results if r.id.startswith("source/")][: BRIEF.search_notes]
    named = named_pages(pages)
    ids = _candidates(call, [r.id for r in pages], named)
    kb = call.services.kb()
    with kb.db.reading() as conn:
        history = validity.history_of(conn, ids)
    subjects: list[Subject] = []
    for page_id in ids:
        subject = _subject(call, page_id, history.get(page_id, []), as_of)
        if subject is not None:
            subjects.append(subject)
    picked = _pick(call, subjects, named)
    subjects = _with_chain(call, picked, history, as_of, chain_starts(question, picked))
    with kb.db.reading() as conn:
        # on the subjects and on the other pages the search found for the question
        conflicts = _open_conflicts(
            conn, list(dict.fromkeys([*(s.id for s in subjects), *ids])), call
        )
    evidence = gather_evidence(call, question, subjects, [n.id for n in notes], as_of)
    degraded = list(dict.fromkeys([*found.degraded, *wide.degraded]))
    return _fit(question, as_of, budget, subjects, conflicts, evidence, degraded)


def named_pages(results: Sequence[SearchResult]) -> list[str]:
    """The page results the question names: a run of its words is the page's title or
    alias in the entity index (the title arm found it, not by a similar spelling)."""
    return [
        r.id
        for r in results
        if "title" in r.ranks and not any(x.startswith("fuzzy") for x in r.labels)
    ]


def _candidates(call: CallContext, ranked: Sequence[str], named: Sequence[str]) -> list[str]:
    """The pages weighed as subjects, in the search's order: its best page results the
    caller may read, a few more than the subjects kept, the events among its results
    (what happened: a meeting, a decision, an incident) and the pages the question names.
    When the search found no event, the events linking to most of the entities it found
    and the question names (the decision the people it found made)."""
    visible = list(dict.fromkeys(p for p in ranked if call.scope.page_visible(p)))
    events = dated_folders(call.services.schema())
    found_events = [p for p in visible if p.split("/", 1)[0] in events][: BRIEF.candidates]
    named = [p for p in named if call.scope.page_visible(p)]
    out = list(dict.fromkeys([*found_events, *visible[: BRIEF.candidates], *named]))
    entities = [p for p in out if p.split("/", 1)[0] not in events]
    if found_events or not entities:
        return out
    with call.services.kb().db.reading() as conn:  # the events naming those entities
        rows = conn.execute(
            "SELECT l.from_id FROM links l WHERE l.to_id = ANY(%s) GROUP BY l.from_id"
            " ORDER BY count(DISTINCT l.to_id) DESC, max(l.from_id) DESC LIMIT 60",
            (entities,),
        ).fetchall()
    linked = [
        str(pid)
        for (pid,) in rows
        if str(pid).split("/", 1)[0] in events and call.scope.page_visible(str(pid))
    ]
    return list(dict.fromkeys([*out, *linked[: BRIEF.neighbour_events]]))


def _pick(call: CallContext, found: Sequence[Subject], named: Collection[str]) -> list[Subject]:
    """The pages the question is about, each group in the search's order: the events
    (an event answers what happened), then the pages the question names (one of them at
    least, when there is one), then the others."""
    events = dated_folders(call.services.schema())
    happened = [s for s in found if s.folder in events]
    names = [s for s in found if s.id in named and s.folder not in events]
    others = [s for s in found if s not in happened and s not in names]
    kept = [*happened, *names, *others][: BRIEF.max_subjects]
    if names and not any(s in kept for s in names):
        kept = [*kept[: BRIEF.max_subjects - 1], names[0]]
    return kept


def chain_starts(question: str, subjects: Sequence[Subject]) -> set[str]:
    """The subjects whose supersession chain the brief follows: the first, and those
    saying at least ``BRIEF.chain_words`` of the question's words. A subject there for one word
    (the company's name) tells no story the question asks for; the pages replacing it
    would only take the place of evidence."""
    asked = key_words(question)
    return {
        s.id
        for i, s in enumerate(subjects)
        if i == 0 or _said(question, asked, s) >= BRIEF.chain_words
    }


def _said(question: str, asked: set[str], s: Subject) -> int:
    """How much of the question a subject's own title, values and date say."""
    values = " ".join(_text(v) for v in (s.status, *s.current.values(), *s.deciders))
    named_day = 2 if s.date and s.date in question else 0  # "what was said on DATE"
    return len(asked & key_words(f"{s.title} {values}")) + named_day


def _subject(
    call: CallContext, page_id: str, rows: list[Interval], as_of: dt.date | None
) -> Subject | None:
    kb = call.services.kb()
    try:
        stored = kb.get_page(page_id, call.folders)
    except MemoryError_:
        return None
    hidden = hidden_fields(call, page_id)
    rows = [r for r in rows if r.field not in hidden]
    day = as_of or dt.date.max
    held = validity.as_of(rows, day) if as_of else {r.field: r for r in rows if r.open}
    if as_of and not any(r.recorded_at <= as_of for r in rows) and rows:
        return None  # nothing of it was known then
    fields = {k: v for k, v in stored.page.fields.items() if k not in hidden}
    current = {name: r.value for name, r in sorted(held.items())} or validity.json_value(fields)
    timeline = [
        {"date": e.date.isoformat(), "text": e.text, "source": e.source}
        for e in stored.page.timeline
        if as_of is None or e.date <= as_of
    ]
    earlier = _earlier(rows, timeline, day)
    folder = stored.folder
    return Subject(
        id=page_id,
        title=stored.page.title,
        folder=folder,
        date=stored.effective_date.isoformat() if stored.effective_date else None,
        status=current.get("status"),
        current={k: v for k, v in current.items() if k not in ("status", *CHAIN_FIELDS)},
        earlier=earlier,
        deciders=[d for name in DECIDER_FIELDS for d in _as_list(current.get(name))],
        supersedes=[x for x in _as_list(current.get("supersedes")) if "/" in x],
        superseded_by=[x for x in _as_list(current.get("superseded_by")) if "/" in x],
        sources=[validity.note_name(s) for s in stored.page.sources],
        timeline=timeline,
        changed_since=[
            {"field": r.field, "to": r.value, "date": r.valid_from.isoformat(), "source": r.source}
            for r in (validity.changed_since(rows, as_of) if as_of else [])
        ][: BRIEF.max_earlier],
    )


def _earlier(
    rows: Sequence[Interval], timeline: Sequence[Mapping[str, Any]], day: dt.date
) -> list[dict[str, Any]]:
    """Values replaced on or before ``day``: what, when, by what, from which note, why."""
    out = []
    for r in rows:
        if r.valid_to is None or r.valid_to > day or r.ended_version is None:
            continue
        after = [x for x in rows if x.field == r.field and x.version == r.ended_version]
        change = r.valid_to.isoformat()
        reason = next(
            (
                e["text"]
                for e in timeline
                if e["date"] == change
                and (r.ended_source is None or e.get("source") in (None, r.ended_source))
            ),
            None,
        )
        out.append(
            {
                "field": r.field,
                "value": r.value,
                "valid_from": r.valid_from.isoformat(),
                "valid_to": change,
                "replaced_by": after[0].value if after else None,
                "source": r.ended_source,
                "reason": cut(reason, BRIEF.max_reason_chars) if reason else None,
            }
        )
    out.sort(key=lambda x: (x["valid_to"], x["field"]), reverse=True)
    out.sort(key=lambda x: x["field"] != "status")  # a status change first
    return out[: BRIEF.max_earlier]


def _with_chain(
    call: CallContext,
    subjects: list[Subject],
    history: Mapping[str, list[Interval]],
    as_of: dt.date | None,
    telling: Collection[str] | None = None,
) -> list[Subject]:
    """The subjects with their supersession links (from the index's links, both
    directions), and the pages those reach (readable ones), a few steps out; reached only
    from the subjects ``telling`` names, when given (and the pages reached from them)."""
    out = list(subjects)
    seen = {s.id for s in subjects}
    queue = list(out)
    while queue:
        subject = queue.pop(0)
        older, newer = _chain_links(call, subject.id)
        if as_of is not None:  # a later decision replacing it was not known then
            newer = _dated_by(call, newer, as_of)
        subject.supersedes = list(dict.fromkeys([*subject.supersedes, *older]))
        subject.superseded_by = list(dict.fromkeys([*subject.superseded_by, *newer]))
        if telling is not None and subject.id not in telling:
            continue  # its links are shown, the pages they reach are not added
        for page_id in (*subject.superseded_by, *subject.supersedes):
            if page_id in seen or len(out) >= BRIEF.max_subjects + BRIEF.max_chain:
                continue
            seen.add(page_id)
            rows = history.get(page_id)
            if rows is None:
                with call.services.kb().db.reading() as conn:
                    rows = validity.history_of(conn, [page_id]).get(page_id, [])
            linked = _subject(call, page_id, rows, as_of)
            if linked is not None:
                out.append(linked)
                queue.append(linked)
                if telling is not None:
                    telling = {*telling, linked.id}  # a step of the story: followed on
    for s in out:  # only ids the caller may read
        s.supersedes = [x for x in s.supersedes if call.scope.page_visible(x)]
        s.superseded_by = [x for x in s.superseded_by if call.scope.page_visible(x)]
    return out


def _dated_by(call: CallContext, ids: Sequence[str], day: dt.date) -> list[str]:
    """The pages of ``ids`` dated on or before ``day`` (or not dated)."""
    if not ids:
        return []
    with call.services.kb().db.reading() as conn:
        rows = conn.execute(
            "SELECT id FROM pages WHERE id = ANY(%s)"
            " AND (effective_date IS NULL OR effective_date <= %s)",
            (list(ids), day),
        ).fetchall()
    known = {str(r[0]) for r in rows}
    return [i for i in ids if i in known]


def _chain_links(call: CallContext, page_id: str) -> tuple[list[str], list[str]]:
    """(pages this one replaced, pages that replaced it), from the links the schema's
    ``supersedes``/``superseded_by`` fields wrote."""
    verbs = {name: name for name in CHAIN_FIELDS}
    schema = call.services.schema()
    folder = page_id.split("/", 1)[0]
    if folder in schema.folder_names:
        for f in schema.folder(folder).fields:
            if f.name in CHAIN_FIELDS and f.verb:
                verbs[f.name] = f.verb
    with call.services.kb().db.reading() as conn:
        rows = conn.execute(
            "SELECT 'out', verb, to_id FROM links WHERE from_id = %(id)s AND to_id IS NOT NULL"
            " AND verb = ANY(%(verbs)s)"
            " UNION ALL SELECT 'in', verb, from_id FROM links WHERE to_id = %(id)s"
            " AND verb = ANY(%(verbs)s)",
            {"id": page_id, "verbs": list(verbs.values())},
        ).fetchall()
    older: list[str] = []
    newer: list[str] = []
    for way, verb, other in rows:
        replaced = (verb == verbs["supersedes"]) == (way == "out")
        (older if replaced else newer).append(str(other))
    return older, newer


def _open_conflicts(conn: Any, ids: Sequence[str], call: CallContext) -> list[dict[str, Any]]:
    if not ids:
        return []
    rows = conn.execute(
        "SELECT c.id, c.page_id, c.field, c.old_value, c.new_value, c.old_source,"
        " c.new_source, c.note, c.created_at, (SELECT max(d.doc_date) FROM source_docs d"
        "  WHERE d.path IN (c.old_source, c.new_source, 'source/' || c.old_source,"
        "  'source/' || c.new_source))"
        " FROM conflicts c WHERE c.status = 'unresolved' AND c.page_id = ANY(%s)"
        " ORDER BY c.created_at DESC, c.id DESC LIMIT 20",
        (list(ids),),
    ).fetchall()
    return [
        {
            "id": int(cid),
            "page": page_id,
            "field": name,
            "sides": [
                {"value": old, "source": old_source},
                {"value": new, "source": new_source},
            ],
            "note": note,
            "date": day.isoformat() if day else None,  # the newer source's day
            "recorded": created.date().isoformat(),
        }
        for cid, page_id, name, old, new, old_source, new_source, note, created, day in rows
        if call.scope.page_visible(str(page_id))
    ]


# ------------------------------------------------------------------------ evidence


def _fit(
    question: str,
    as_of: dt.date | None,
    budget: int,
    subjects: Sequence[Subject],
    conflicts: Sequence[Mapping[str, Any]],
    evidence: Sequence[Evidence],
    degraded: list[str],
) -> dict[str, Any]:
    """Subjects, conflicts and evidence in that order, while the text fits the budget."""
    head = f"Brief: {question}" + (f" (as of {as_of.isoformat()})" if as_of else "")
    parts = [head]
    used = tokens_of(head)
    truncated = False
    kept_subjects: list[Subject] = []
    for s in subjects:
        text = s.render()
        if used + tokens_of(text) > budget and kept_subjects:
            truncated = True
            continue
        kept_subjects.append(s)
        parts.append(text)
        used += tokens_of(text)
    kept_conflicts = []
    for c in conflicts:
        sides = " vs ".join(f"{_text(x['value'])} ({x['source'] or '?'})" for x in c["sides"])
        text = f"open conflict on {c['page']} {c['field']}: {sides}"
        if used + tokens_of(text) > budget:
            truncated = True
            continue
        kept_conflicts.append(c)
        parts.append(text)
        used += tokens_of(text)
    kept_evidence: list[Evidence] = []
    if evidence:
        parts.append("Evidence:")
        used += 3
    for e in evidence:
        text = e.render()
        if used + tokens_of(text) > budget:
            truncated = True
            continue
        kept_evidence.append(e)
        parts.append(text)
        used += tokens_of(text)
    if not kept_subjects and not kept_evidence:
        parts.append("Nothing in your folders answers this.")
    return {
        "question": question,
        "as_of": as_of.isoformat() if as_of else None,
        "subjects": [s.to_dict() for s in kept_subjects],
        "conflicts": list(kept_conflicts),
        "evidence": [e.to_dict() for e in kept_evidence],
        "text": "\n\n".join(parts),
        "tokens": used,
        "budget": budget,
        "truncated": truncated,
        "degraded": degraded,
    }
