"""The evidence sentences an extractive answer ranks: every piece of the pages and raw
notes a search returned (:mod:`read_agent.extractive.evidence`,
:mod:`read_agent.extractive.source_evidence`), scored against the question's words, on
the question's subject and, for a question "as of" a date, none dated after it.

A question names a page ("what price did we agree with Nomin Trade?"): a sentence of
another page of that page's folder (Globex), or of a meeting about one, is about that
other page and is left out while any sentence on the subject remains. A question read as
of a date (``as_of``, :mod:`read_agent.extractive.state_at`) keeps only the pieces dated
on or before it: what was written later was not known then.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memserver.kb.words import normalize_name, words
from memserver.timeparse import en, mn
from memserver.timeparse.mentions import mention_reader
from read_agent.extractive.evidence import Evidence, from_page, from_result, names_focus, own_terms
from read_agent.extractive.evidence import score as score_piece
from read_agent.extractive.page_reader import PageReader
from read_agent.extractive.question import Reading, matched, same_word
from read_agent.extractive.source_evidence import from_source, is_source, unaddressed
from read_agent.reading.lexicon import lexicon
from read_agent.reading.roles import heads_whole
from read_agent.tools.wire import Hit

DEFAULT_RESULTS = 10
WHOLE = 0.999  # a piece's coverage that holds every word asked
EVIDENCE_LINES = 6
LIST_ITEMS = 6  # the most items of a labelled list shown beside the one that matched
AMOUNT = re.compile(r"[$€£]\s?\d[\d,.]*\d|\d[\d,.]*\d\s?(?:₮|төгрөг|MNT|USD)")


def amounts_of(text: str) -> set[str]:
    """The amounts a text gives, as their digits ("$120,000": "120000"; "900₮" and "900
    төгрөг" are one)."""
    return {re.sub(r"\D", "", m.group()) for m in AMOUNT.finditer(text)}


# A count: digits, or a number word of either language's time data worth two or more
# ("eight warehouses", "арван хоног"); "a", "an" and "one" would be found in any sentence,
# and "few" is no number.
_COUNT_WORDS = sorted(
    {
        w
        for w, n in (*en.NUMBERS.items(), *mn.NUMBERS.items())
        if n >= 2 and " " not in w and w not in en.VAGUE
    },
    key=len,
    reverse=True,
)
# Digits that are no date's or time's part ("2026-10-12", "10:30") nor a year alone.
_COUNT_DIGITS = r"(?<![\w\-/:.])(?!(?:19|20)\d\d\b)\d[\d,.]*(?![\d\-/:])"
COUNT = re.compile(_COUNT_DIGITS + r"|\b(?:" + "|".join(_COUNT_WORDS) + r")\b", re.IGNORECASE)
COUNTED_NEAR = 2  # a count stands at most this many words from the thing it counts


def counts(text: str, things: Sequence[str]) -> bool:
    """Whether ``text`` gives a count next to one of ``things`` (the words naming what a
    question counts: "6 dispatchers", "Диспетчер 6 хүн"), not only some other count."""
    said = words(text)
    at = [i for i, w in enumerate(said) if COUNT.fullmatch(w)]
    return any(
        same_word(t, said[j])
        for i in at
        for j in range(max(0, i - COUNTED_NEAR), min(len(said), i + COUNTED_NEAR + 1))
        if j != i
        for t in things
    )


NAMED_NEAR = 4  # a thing's name stands at most this many words from the kind it is of
_WORD = re.compile(r"[^\W\d_]+")


def names_things(text: str, kinds: Sequence[str], asked: Sequence[str]) -> bool:
    """Whether ``text`` names two or more things next to a word of ``kinds`` (what a
    question asks for by its kind: "three warehouses (Denver, Aurora, Pueblo)" for
    "which warehouses ..."): words written as names, none of them a word ``asked``."""
    said = [(m.group(0), _opens(text, m.start())) for m in _WORD.finditer(text)]
    found: set[str] = set()
    for i, (word, _) in enumerate(said):
        if not any(same_word(k, word.lower()) for k in kinds):
            continue
        for other, opens in said[max(0, i - NAMED_NEAR) : i + NAMED_NEAR + 1]:
            low = other.lower()
            if other[0].isupper() and not opens and not any(same_word(a, low) for a in asked):
                found.add(low)
    return len(found) >= 2


def _opens(text: str, at: int) -> bool:
    """Whether the word at ``at`` opens a sentence, a line or a heading (capitalised
    whatever it is)."""
    before = text[:at].rstrip(' \t*_"“(')
    return not before or before[-1] in ".!?:#\n•-"


class Ranker:
    """The pages read for one answer, and their pieces ranked for a question."""

    def __init__(self, reader: PageReader, limit: int = DEFAULT_RESULTS) -> None:
        self.reader = reader
        self.limit = limit
        self.mentions = mention_reader(reader.schema.tz if reader.schema is not None else "UTC")

    def held(self, pieces: Sequence[Evidence]) -> list[Evidence]:
        """``pieces`` known on the ``as_of`` date: none dated after it."""
        if self.reader.as_of is None:
            return list(pieces)
        return [p for p in pieces if p.date is None or p.date[:10] <= self.reader.as_of]

    def _candidates(self, results: Sequence[Hit]) -> list[Evidence]:
        out: list[Evidence] = []
        for rank, item in enumerate(results):
            page = self.reader.pages.get(item.id)
            if page is not None:
                out += from_page(page, rank, self.reader.dated(page))
            elif is_source(item):
                out += from_source(item, rank, self.mentions)
            else:
                spec = self.reader.folder(item.folder)
                names = spec.field_names if spec is not None else ()
                out += from_result(item, rank, bool(spec and spec.date_field), names)
        return unaddressed(out)

    def name_focus(self, reading: Reading, results: Sequence[Hit]) -> bool:
        """Whether a piece of ``results`` names the kind of thing the question asks for
        (:func:`read_agent.extractive.evidence.names_focus`)."""
        return any(names_focus(p, reading) for p in self._candidates(results))

    def holds_all(self, reading: Reading, results: Sequence[Hit]) -> bool:
        """Whether a piece of ``results`` holds every word the question asks (any does
        when it asks no word: a page named and nothing else)."""
        if not reading.terms and not reading.identifiers:
            return True
        return any(score_piece(p, reading)[1] >= WHOLE for p in self._candidates(results))

    def best(
        self,
        reading: Reading,
        exclude_field: str | None = None,
        results: Sequence[Hit] = (),
        named: Sequence[Hit] = (),
    ) -> list[Evidence]:
        pool = self._candidates(results) if results else self._candidates(self.read_results())
        pool = self.held(pool)
        scored = []
        seen: set[str] = set()
        for piece in pool:
            if piece.field is not None and piece.field == exclude_field:
                continue
            value, coverage = score_piece(piece, reading)
            key = " ".join(words(piece.text))
            if coverage <= 0 or key in seen:
                continue
            seen.add(key)
            scored.append((round(coverage, 3), value, piece))
        ranked = self._on_topic(ordered(scored, reading), named)
        if reading.wants == "who":  # "who is the IT manager at Nomin Trade?"
            holders = {
                id(p)
                for c, _, p in scored
                if c >= 1.0 and self._someone(p) and self._of_subject(p, reading)
            }
            # "who is our CEO?": not another company's; "who runs Globex?": its head
            ranked.sort(
                key=lambda p: (
                    reading.ours and self._elsewhere(p),
                    id(p) not in holders,
                    reading.whole and not self._heads(p),
                )
            )
        return with_lists(ranked[:EVIDENCE_LINES], pool, reading)

    def _elsewhere(self, piece: Evidence) -> bool:
        """The piece is a field of the page of a person who works for another
        organisation than the team's own: a link of the page, to a folder other than
        people's, names a page that is not it ("company: Globex")."""
        if not self._someone(piece) or self.reader.schema is None:
            return False
        page = self.reader.pages.get(piece.page)
        spec = self.reader.folder(piece.page.split("/", 1)[0])
        if page is None or spec is None:
            return False
        org = self.reader.schema.organisation
        ours = {normalize_name(n) for n in (org.names if org is not None else ())}
        for f in spec.fields:
            target = self.reader.folder(f.folder) if f.is_link and f.folder else None
            value = page.fields.get(f.name)
            if target is None or target.type == spec.type or not value:
                continue
            values = value if isinstance(value, list) else [value]
            if any(normalize_name(str(v)) not in ours for v in values):
                return True
        return False

    def _heads(self, piece: Evidence) -> bool:
        """The piece is a person's field holding a role at the head of a whole
        organisation ("role: CEO and co-founder"; :func:`heads_whole`)."""
        page = self.reader.pages.get(piece.page)
        if not self._someone(piece) or page is None or piece.field is None:
            return False
        return heads_whole(str(page.fields.get(piece.field) or ""), lexicon())

    def _of_subject(self, piece: Evidence, reading: Reading) -> bool:
        """The piece, or a field of its page, names one of the question's subjects
        ("Номин Трейдийн IT менежер" names Номин Трейд): the holder of a role at the
        company asked about, not one elsewhere. True when the question names none."""
        if not reading.subjects:
            return True
        page = self.reader.pages.get(piece.page)
        values = [str(v) for v in page.fields.values()] if page is not None else []
        said = words(" ".join([piece.text, *values]))
        return any(
            len(matched(name, said)) == len(name)
            for subject in reading.subjects
            for name in (words(n) for n in self.reader.names(subject.id) or [subject.title])
            if name
        )

    def _someone(self, piece: Evidence) -> bool:
        """The piece is a field of a person's page ("Тэмүүлэн Бат — role: IT менежер"):
        when it holds every word a "who" question asks, that person is the answer."""
        if piece.kind != "field":
            return False
        spec = self.reader.folder(piece.page.split("/", 1)[0])
        return spec is not None and spec.type == "person"

    def read_results(self) -> list[Hit]:
        return [Hit(pid, folder=page.folder) for pid, page in self.reader.pages.items()]

    def _on_topic(self, pieces: list[Evidence], named: Sequence[Hit]) -> list[Evidence]:
        """``pieces`` without those about another page of a named page's folder (unless
        nothing else is left): under "what price did we agree with Nomin Trade?", a Globex
        page's sentence, or one of a meeting with Globex, is about Globex."""
        folders = {item.folder for item in named}
        ours = {normalize_name(n) for item in named for n in self.reader.names(item.id)}
        if not ours:
            return pieces

        def elsewhere(piece: Evidence) -> bool:
            page = self.reader.pages.get(piece.page)
            if page is None:
                return False
            if page.folder in folders:
                return normalize_name(page.title) not in ours
            links = {normalize_name(n) for n in self.reader.link_names(page)}
            others = {
                normalize_name(p.title) for p in self.reader.pages.values() if p.folder in folders
            } - ours
            return bool(links & others) and not links & ours

        kept = [p for p in pieces if not elsewhere(p)]
        return kept or pieces


def with_lists(
    top: Sequence[Evidence], pool: Sequence[Evidence], reading: Reading
) -> list[Evidence]:
    """``top``, each item of a list whose label says a word asked that the item itself
    does not ("Action plan:" for "what did they plan ...") followed by the rest of its
    list, in the page's order (at most LIST_ITEMS): the label names what is asked, so its
    items answer together, whichever of them hold the question's other words."""
    out: list[Evidence] = []
    for piece in top:
        if piece in out:
            continue
        out.append(piece)
        if piece.kind != "section" or not piece.heading:
            continue
        if not matched(reading.terms, words(piece.heading), reading.sense_of) - own_terms(
            piece, reading
        ):
            continue
        siblings = [
            p
            for p in pool
            if p.page == piece.page and p.heading == piece.heading and p.kind == "section"
        ]
        out += [p for p in siblings if p not in out][:LIST_ITEMS]
    return out


def newest_first(day: str) -> str:
    """A sort key putting newer ISO dates first and undated pieces last."""
    if not day:
        return chr(0x10FFFF) * 10
    return "".join(chr(0x10FFFF - ord(c)) for c in day)


def newer(day: str, reading: Reading) -> str:
    """A sort key: with "current"/"recently" newer first (inverted characters), undated last."""
    return newest_first(day) if reading.soft else ""


def ordered(scored: Sequence[tuple[float, float, Evidence]], reading: Reading) -> list[Evidence]:
    """(coverage, score, piece) in the order an answer quotes them: the best score first
    (for "current" or "recently", the fullest, then the newest); a sentence that names the
    kind of thing asked for and holds half the question's words before one that holds
    more of them but names nothing of that kind ("which tablets did the pilot include?":
    the sentence naming tablets); for a figure or a count, the sentences that give one first."""
    out = list(scored)
    if reading.soft:
        out.sort(key=lambda x: (-x[0], newer(x[2].date or "", reading), -x[1]))
    else:
        out.sort(key=lambda x: -x[1])
    out.sort(key=lambda x: not (x[0] >= 0.5 and names_focus(x[2], reading)))
    if reading.wants == "amount":
        out.sort(key=lambda x: AMOUNT.search(x[2].text) is None)
    elif reading.wants == "count":  # "how many ...": the sentences that give a count first
        out.sort(key=lambda x: COUNT.search(x[2].text) is None)
    return [p for _, _, p in out]
