"""Follow-up questions without a model: pronouns and elliptic questions resolved from
the previous turn's pages, in English and Mongolian.

The pages the previous answer cited first (its top citations) are the entities of that
turn. A pronoun is replaced by the name of one of them ("he", "his", "тэр", "түүний"
by a person's, "it", "they", "тэд" by another page's): "and who does he report to?"
after a question about Bob becomes "who does Bob Martinez report to?". An elliptic
question ("what about Initech?", "and Alice?", "Харин Initech?", "Initech-ийн хувьд?")
repeats the previous question with the new name in place of the entity it named (a
cited page's name, or a name its links hold: the meeting cited is about Globex): after
"When was the latest meeting with Globex?" it becomes "When was the latest meeting
with Initech?". A place the previous answer named ("and what was decided there?",
"тэнд юу шийдсэн бэ?") is the first page it cited that is not a person: "what was
decided at Initech renewal call?". A clause is no name: "and what was decided?" is not
an elliptic question about something called "what was decided". Anything else is left
as asked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memserver.kb.words import STOPWORDS, words
from read_agent.extractive.question import AS_OF_WORDS
from read_agent.tools.citations import extract_citations

PERSON_PRONOUNS = ("his", "hers", "her", "him", "he", "she", "түүний", "түүнийг", "түүнд",
                   "түүнтэй", "тэр")  # fmt: skip
OTHER_PRONOUNS = ("their", "them", "they", "its", "it", "тэдний", "тэд", "үүний")
POSSESSIVE = frozenset({"his", "hers", "her", "their", "its"})
MAX_ELLIPTIC_WORDS = 5
# "there" at the end of a question is a place ("what was decided there?"); before or
# after a verb of being it only says that something exists ("was there a meeting?").
# Mongolian "тэнд" (there) is a place wherever it stands.
_THERE = re.compile(
    r"(?<![\w-])(?<!\bis\s)(?<!\bwas\s)(?<!\bare\s)(?<!\bwere\s)there(?=\s*[?.!]*\s*$)"
    r"|(?<!\w)(?P<mn>тэнд(?:ээс)?)(?!\w)",
    re.IGNORECASE,
)
# Words that open a clause, not a name: an elliptic question's "name" must not start so.
_CLAUSE_START = frozenset(
    {"what", "who", "whom", "whose", "when", "where", "which", "why", "how", "did", "do",
     "does", "is", "was", "were", "are", "can", "could", "will", "would", "юу", "хэн",
     "хэзээ", "хаана", "ямар", "яагаад"}
)  # fmt: skip
PRIOR_PAGES = 3  # the previous answer's first citations that count as its entities
_LEAD = re.compile(r"^\s*(?:and|also|харин|тэгвэл)\s+", re.IGNORECASE)
_ABOUT = re.compile(
    r"^\s*(?:(?:and|also|харин|тэгвэл)\s+)?(?:(?:what|how)\s+about\s+)?(?P<name>.+?)"
    r"(?:\s*-?(?:ийн|ын|ий|ы)?\s+(?:хувьд|тухайд|яах\s+вэ|яасан\s+бэ))?\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_ELLIPTIC_START = re.compile(
    r"^\s*(?:(?:and|also|харин|тэгвэл)\b|(?:what|how)\s+about\b)", re.IGNORECASE
)
_ELLIPTIC_END = re.compile(r"(?:хувьд|тухайд|яах\s+вэ|яасан\s+бэ)\s*[?.!]*\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Prior:
    """A page the previous answer cited: its id, names and whether it is a person."""

    id: str
    title: str
    aliases: tuple[str, ...] = ()
    person: bool = False
    linked: tuple[str, ...] = ()  # names its link fields hold (a meeting's company ...)

    @property
    def names(self) -> list[str]:
        """Its own names, then those of the pages it links to, longest first in each."""
        own = sorted({self.title, *self.aliases}, key=len, reverse=True)
        return own + sorted(set(self.linked) - set(own), key=len, reverse=True)


@dataclass(frozen=True)
class Turn:
    """One earlier message of the conversation (``user`` or ``assistant``)."""

    role: str
    content: str


# "what did we think then?", "тэр үед": the day the previous answer led with.
_THEN = re.compile(
    r"(?<!\w)(?:back\s+)?then(?=\s*[?.!]*\s*$)|(?<!\w)тэр\s+үед(?:ээ)?(?!\w)", re.IGNORECASE
)
_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_FRAME = (
    STOPWORDS | AS_OF_WORDS | {"what", "did", "do", "we", "was", "were", "юу", "гэж", "бэ", "вэ"}
)


def then_as_of(question: str, history: Sequence[Turn]) -> str | None:
    """``question`` with "then" ("what did we think then?", "тэр үед юу гэж бодож
    байсан бэ?") written as "as of" the first day the previous answer's first line names,
    or None when it says no "then" or the previous answer names no day."""
    if not _THEN.search(question):
        return None
    for turn in reversed(history):
        if turn.role == "assistant":
            first = next((line for line in turn.content.splitlines() if line.strip()), "")
            day = _DAY.search(first)
            if day is None:
                return None
            asked = _THEN.sub(f"as of {day.group(0)}", question, count=1)
            previous = prior_question(history[: history.index(turn)])
            topical = [w for w in words(_THEN.sub(" ", question)) if w not in _FRAME]
            if not topical and previous:  # "what did we think then?": of the same topic
                return f"{previous.rstrip(' ?.!')} as of {day.group(0)}?"
            return asked
    return None


def prior_ids(history: Sequence[Turn]) -> list[str]:
    """The pages the last answer cited first."""
    for turn in reversed(history):
        if turn.role == "assistant":
            return extract_citations(turn.content)[:PRIOR_PAGES]
    return []


def prior_question(history: Sequence[Turn]) -> str | None:
    for turn in reversed(history):
        if turn.role == "user" and turn.content.strip():
            return turn.content.strip()
    return None


def rewrite(question: str, previous: str | None, priors: Sequence[Prior]) -> str | None:
    """The question with its pronoun or ellipsis resolved, or None when it needs none
    (or nothing in the previous turn resolves it)."""
    if not priors:
        return None
    names_itself = any(w[:1].isupper() for w in question.split()[1:])
    for pronouns, people in ((PERSON_PRONOUNS, True), (OTHER_PRONOUNS, False)):
        found = _pronoun(question, pronouns)
        if found is None or names_itself:
            continue  # "and what is his role, Alex Kim's?": the question names its own
        target = next((p for p in priors if p.person == people), None)
        if target is None:
            return None
        return _replace_pronouns(question, pronouns, target.title)
    place = next((p for p in priors if not p.person), None)
    if place is not None and _THERE.search(question):
        text = _THERE.sub(
            lambda m: place.title if m["mn"] else f"at {place.title}",
            _LEAD.sub("", question),
            count=1,
        )
        return text[:1].upper() + text[1:]
    if previous is None or not (_ELLIPTIC_START.search(question) or _ELLIPTIC_END.search(question)):
        return None
    match = _ABOUT.match(question)
    name = match.group("name").strip() if match else ""
    if not name or len(name.split()) > MAX_ELLIPTIC_WORDS:
        return None
    if name.split()[0].lower() in _CLAUSE_START:
        return None  # "and what was decided?": a question of its own, not a name
    for prior in priors:
        for old in prior.names:
            at = re.search(rf"(?<!\w){re.escape(old)}", previous, re.IGNORECASE)
            if at is not None:
                return previous[: at.start()] + name + previous[at.end() :]
    return None


def _pronoun(text: str, pronouns: Sequence[str]) -> str | None:
    for word in pronouns:
        if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE):
            return word
    return None


def _replace_pronouns(question: str, pronouns: Sequence[str], title: str) -> str:
    text = _LEAD.sub("", question)
    for word in pronouns:
        shown = f"{title}'s" if word in POSSESSIVE else title
        text = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", shown, text, flags=re.IGNORECASE)
    return text[:1].upper() + text[1:] if text else text
