"""A question that asks several things at once, searched part by part and merged.

A company question often asks up to four things in one breath: "How do we price Acme
Track now? Which model came before, since when has this one held, and who chose it?".
Searched whole, its words pull toward what most of it shares, and its time words rule
all of it: "now" lowers the old record of what was replaced, "on 2026-08-01"
hides everything but that day. So (``memserver.search.pipeline`` drives it):

1. :func:`split_question`: the parts are the question's sentences, and within a sentence
   its clauses that open with a question word after a comma, a semicolon or a joining
   word (``memserver.kb.words.QUESTION_WORDS``, ``CLAUSE_JOINERS``: each language's
   words as data), at most ``PARTS.max_parts``; a part of one word joins the one before;
2. :func:`part_questions`: each part is asked as written, its own time words read for it
   alone ("current", "first", a date stay in their part). A part that names nothing of
   its own ("which model came before") is asked with the question's subject after it: the
   first part without its time words;
3. the whole question and each part are searched (the pipeline);
4. :func:`merge`: pages and notes each ranked by reciprocal rank fusion of the lists
   (the whole question's weighing ``PARTS.whole_weight``), the pages the whole question
   pinned or ordered by date first; each list's first page and first note are kept
   (the guarantee of :mod:`memserver.search.kinds`), each kind within its quota and its
   share of the token budget.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from memserver.kb.words import CLAUSE_JOINERS, QUESTION_WORDS, words
from memserver.search import kinds
from memserver.search.intent import identifiers, written_names
from memserver.search.settings import FUSION, PARTS, PartSettings
from memserver.search.types import SearchRequest, SearchResponse, SearchResult

_ASKING = "|".join(sorted(map(re.escape, QUESTION_WORDS), key=len, reverse=True))
_JOINING = "|".join(sorted(map(re.escape, CLAUSE_JOINERS), key=len, reverse=True))
# A sentence ends at "?" (anywhere), or at ". ! ;" before a capital letter.
_SENTENCE = re.compile(r"(?<=\?)\s*|(?<=[.!;])\s+(?=[^\W\d_])(?=[^a-zа-яёөү])")
# A clause break: a comma or semicolon, or a joining word, before a question word.
_CLAUSE = re.compile(
    rf"(?:\s*[,;]\s*(?:(?:{_JOINING})\s+)?|\s+(?:{_JOINING})\s+)(?=(?:{_ASKING})\b)",
    re.IGNORECASE,
)
PINNED_LABELS = ("pinned", "date_ordered")
OUTSIDE_WINDOW = "outside_window"  # the label shaping.fill_outside_window gives


def split_question(text: str, settings: PartSettings = PARTS) -> list[str]:
    """The parts of ``text`` (one when it asks one thing), in order, trimmed of their
    end punctuation."""
    parts: list[str] = []
    for sentence in _SENTENCE.split(text):
        for clause in _CLAUSE.split(sentence):
            clause = clause.strip().rstrip("?.!;,").strip()
            if not clause:
                continue
            if parts and len(words(clause)) < 2:
                parts[-1] = f"{parts[-1]}, {clause}"  # "who decided, and when"
            else:
                parts.append(clause)
    if len(parts) > settings.max_parts:
        parts = [*parts[: settings.max_parts - 1], ", ".join(parts[settings.max_parts - 1 :])]
    return parts


def names_something(part: str) -> bool:
    """Whether a part writes a name or an identifier of its own (a capitalised word
    after its first, a figure, a ticket id): it stands alone."""
    named = {w for w in written_names(part) if not w.isdigit()}
    return bool(named or identifiers(part))


def part_questions(parts: Sequence[str], core: Callable[[str], str]) -> list[str]:
    """The question each part is searched with: the part itself, or, when it names
    nothing of its own, the part followed by the subject (``core`` of the first part:
    the part without its time words)."""
    if len(parts) < 2:
        return list(parts)
    subject = core(parts[0]).strip()
    out = [parts[0]]
    for part in parts[1:]:
        own = names_something(core(part))
        out.append(part if own or not subject else f"{part} {subject}")
    return out


def merge(
    lists: Sequence[tuple[float, Sequence[SearchResult]]],
    limit: int,
    budget: int | None,
    size: Callable[[SearchResult], int],
) -> tuple[list[SearchResult], int]:
    """The results of several searches of one question (weight, results best first; the
    whole question's first) as one response: each kind ranked by reciprocal rank fusion
    of its ranks in each list, what the first list pinned or ordered by date first, each
    list's first page and first note kept, each kind within its quota of ``limit`` and
    its share of ``budget``. A result's score is its fused score over the best's."""
    k = FUSION.rrf_k
    fused: dict[str, float] = {}
    found: dict[str, SearchResult] = {}
    guarded: list[str] = []
    for weight, results in lists:
        ranks = {True: 0, False: 0}
        firsts: dict[bool, str] = {}
        for result in results:
            note = kinds.is_note(result.id)
            ranks[note] += 1
            fused[result.id] = fused.get(result.id, 0.0) + weight / (k + ranks[note])
            found.setdefault(result.id, result)
            firsts.setdefault(note, result.id)
        guarded += [i for i in firsts.values() if i not in guarded]
    if not found:
        return [], 0
    fixed = [r.id for r in lists[0][1] if set(r.labels) & set(PINNED_LABELS)] if lists else []
    order = fixed + sorted(
        (i for i in found if i not in fixed), key=lambda i: -fused[i]
    )  # stable: ties keep the order they were found in
    top = max(fused.values())
    pages = [i for i in order if not kinds.is_note(i)]
    notes = [i for i in order if kinds.is_note(i)]
    page_quota, note_quota = kinds.quotas(len(pages), len(notes), limit)
    chosen = set(kinds.keep_arms_best(pages, pages, guarded, page_quota, str, fixed.__contains__))
    chosen |= set(kinds.keep_arms_best(notes, notes, guarded, note_quota, str))
    results = [replace(found[i], score=round(fused[i] / top, 4)) for i in order if i in chosen]
    return kinds.split_budget(results, size, budget, _result_id)


def _result_id(result: SearchResult) -> str:
    return result.id


def search_in_parts(
    req: SearchRequest,
    search: Callable[[SearchRequest], SearchResponse],
    core: Callable[[str], str],
    limit: int,
    budget: int | None,
    size: Callable[[SearchResult], int],
) -> SearchResponse:
    """``req`` searched whole and part by part (:func:`split_question`,
    :func:`part_questions`), merged (:func:`merge`); searched whole only when it asks one
    thing. The response is the whole question's (its reading of time, intent, arms) with
    the merged results and the questions its parts were searched with (``parts``)."""
    began = time.perf_counter()
    asked = part_questions(split_question(req.question), core)
    whole = search(req)
    if len(asked) < 2:
        return whole
    answers = [search(replace(req, question=q)) for q in asked]
    results, tokens = merge(
        [(PARTS.whole_weight, whole.results), *((1.0, a.results) for a in answers)],
        limit,
        budget,
        size,
    )
    degraded = dict.fromkeys([*whole.degraded, *(d for a in answers for d in a.degraded)])
    return replace(
        whole,
        results=tuple(results),
        tokens=tokens,
        degraded=tuple(degraded),
        outside_window=sum(1 for r in results if OUTSIDE_WINDOW in r.labels),
        parts=tuple(asked),
        took_ms=(time.perf_counter() - began) * 1000,
    )
