"""The typed reading of a question: what every answer path reads instead of its words."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    """What a question asks for beyond a plain fact; a question may be of several."""

    DECISION = "decision"  # what was decided, by whom, why, the alternatives
    CHANGE = "change"  # what replaced what, whether it still holds, what changed since
    AS_OF = "as_of"  # what held on a past day
    EVIDENCE = "evidence"  # what supports a claim, direct or inferred
    AGREEMENT = "agreement"  # whether sources agree
    LEARNED = "learned"  # when the memory first learned something
    PROFILE = "profile"  # who or what something is


class Wants(StrEnum):
    """The answer's type."""

    WHEN = "when"
    WHO = "who"
    AMOUNT = "amount"  # a figure: a price, a fee, a value
    COUNT = "count"  # how many of something
    WHERE = "where"
    WHAT = "what"


@dataclass(frozen=True)
class Subject:
    """A page the question names: by its title, an alias, its name in the other script,
    or (``earlier``) the page the conversation was about."""

    id: str
    title: str
    folder: str
    earlier: bool = False


@dataclass(frozen=True)
class FieldAsked:
    """The schema field a question asks about, of the subject's ``folder``; ``inward``:
    the pages whose field links to the subject ("who reports to Alex"), not the
    subject's own value ("who does Bob report to"). ``by``: how it was matched (its own
    words, a meaning's words, the answer's type alone, the embedder)."""

    folder: str
    name: str
    inward: bool = False
    by: str = "words"


@dataclass(frozen=True)
class Reading:
    """What a question asks, read once (see :func:`read_agent.reading.read`)."""

    question: str
    wants: Wants
    terms: tuple[str, ...]  # topical words: no frame word, no name of a subject
    # a term said inside a phrase of a meaning ("charge" of "in charge"), with the
    # meaning's words that say it in a text ("own", "leads", "responsible", ...)
    senses: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # it asks of the team's own organisation ("our CEO", "Acme's CTO", "манай компани")
    ours: bool = False
    # it asks who heads its subject as a whole, naming no part ("who runs Globex?")
    whole: bool = False
    # it asks for the pages whose field holds a value it names, no page named: (folder,
    # field, value) ("which companies are customers?": companies, status, customer)
    valued: tuple[str, str, str] | None = None
    # a question of several parts: the terms of each ("who leads it, and since when")
    parts: tuple[tuple[str, ...], ...] = ()
    # the terms that name the kind of thing asked for ("what monthly minimum did ...")
    focus: tuple[str, ...] = ()
    # meanings a word asks for without saying them ("why": a cause), as their first word;
    # a sentence saying one is preferred, not required
    unsaid: tuple[str, ...] = ()
    # the folder of the page asked for by its kind ("which customer pays ...": companies)
    which: str | None = None
    # the terms that name no kind of page: "pricing" of "the first decision we settled on
    # pricing" ("decision" and "settled" name the folder of decisions)
    topic: tuple[str, ...] = ()
    kinds: frozenset[Kind] = frozenset()
    subjects: tuple[Subject, ...] = ()
    field: FieldAsked | None = None
    section: str | None = None  # a section of the subject's page ("Decisions")
    identifiers: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()  # folders the question names
    meant: tuple[str, ...] = ()  # folders its words mean ("met": meetings)
    relation: str | None = None  # a typed edge the search read ("reports_to")
    order: str | None = None  # newest | oldest | next
    window: Mapping[str, str] | None = None
    soft: bool = False  # "current", "recently": newer facts first
    tense: str | None = None  # "future" | "past"
    as_of: str | None = None  # an ISO day the question asks the state at, or BEFORE_CHANGE
    current: bool = False  # it asks what holds now
    claim: str | None = None  # "what supports X?": X
    earlier: tuple[Subject, ...] = ()  # the conversation's subjects

    @functools.cached_property
    def sense_of(self) -> Mapping[str, tuple[str, ...]]:
        """:attr:`senses` as a mapping, made once for every piece the answer scores."""
        return dict(self.senses)

    @property
    def listing(self) -> bool:
        """Only a window (and folders), nothing else asked: list what is in it."""
        return (
            self.window is not None
            and not self.terms
            and not self.identifiers
            and (self.field is None or not self.subjects or self.listed_by is not None)
        )

    @property
    def listed_by(self) -> tuple[str, str] | None:
        """The field of a listed folder that links to the subject asked about, and the
        subject's name ("meetings with Globex in November": the meetings whose company is
        Globex), or None."""
        field, subjects = self.field, self.subjects
        if field is None or len(subjects) != 1 or field.folder not in self.folders:
            return None
        if field.inward or field.folder == subjects[0].folder:
            return None
        return field.name, subjects[0].title

    def is_(self, kind: Kind) -> bool:
        return kind in self.kinds

    @property
    def since_then(self) -> bool:
        """It asks what became of something since (a change, or the current state)."""
        return Kind.CHANGE in self.kinds or self.current

    @property
    def company(self) -> bool:
        """A question a company memory's brief answers: decisions, changes, a past day,
        the evidence, whether sources agree."""
        return bool(
            self.kinds & {Kind.DECISION, Kind.CHANGE, Kind.AS_OF, Kind.EVIDENCE, Kind.AGREEMENT}
        )
