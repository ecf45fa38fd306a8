"""A follow-up read with the conversation: its pronouns, its ellipsis and its missing
subject resolved from the previous turn's pages, with each language's words from the
lexicon (``pronouns``, ``follow_up``, ``then``).

The pages the previous answer cited first are the conversation's earlier subjects. A
pronoun is replaced by the name of one of them ("he", "his", "тэр", "түүний" by a
person's, "it", "they", "тэд" by another page's): "and who does he report to?" after a
question about Bob becomes "who does Bob Martinez report to?". An elliptic question
("what about Initech?", "and Alice?", "Харин Initech?", "Initech-ийн хувьд?") repeats
the previous question with the new name in place of the one it named. A follow-up that
names nothing of its own ("and what was decided?", "тэнд юу шийдсэн бэ?", "what was
decided there?") is asked of the earlier subject that is not a person: "Initech
renewal call: what was decided?". "Then" at a question's end is the day the previous
answer led with.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from read_agent.reading.lexicon import Lexicon, find, lexicon, says, tokens
from read_agent.reading.read import topical

PRIOR_PAGES = 3  # the previous answer's first citations that count as its subjects
MAX_ELLIPTIC_WORDS = 5
_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_CITATION = re.compile(r"\[([^\[\]\s]+/[^\[\]]+)\]")


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


def prior_ids(history: Sequence[Turn]) -> list[str]:
    """The pages the last answer cited first."""
    for turn in reversed(history):
        if turn.role == "assistant":
            return list(dict.fromkeys(_CITATION.findall(turn.content)))[:PRIOR_PAGES]
    return []


def prior_question(history: Sequence[Turn]) -> str | None:
    for turn in reversed(history):
        if turn.role == "user" and turn.content.strip():
            return turn.content.strip()
    return None


def _pattern(phrases: Sequence[str]) -> re.Pattern[str]:
    """A pattern of the lexicon's phrases as whole words (any spacing), longest first."""
    listed = sorted({p for p in phrases if p}, key=len, reverse=True)
    alternation = "|".join(r"\s+".join(re.escape(w) for w in p.split()) for p in listed)
    return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.IGNORECASE)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _without_lead(question: str, lex: Lexicon) -> str:
    """The question without the follow-up word it opens with ("and ...", "харин ...")."""
    opener = _pattern(lex.follow_up)
    found = opener.match(question.strip())
    return question.strip()[found.end() :].strip() if found else question.strip()


def then_as_of(question: str, history: Sequence[Turn], lex: Lexicon | None = None) -> str | None:
    """``question`` with "then" at its end ("what did we think then?", "тэр үед юу гэж
    бодож байсан бэ?") written as "as of" the day the previous answer's first line names,
    or None when it says no such "then" or that line names no day."""
    lex = lex or lexicon()
    q = tokens(question)
    # "then" closes the question ("... then?"; not "and then what?"); a language that
    # puts it anywhere ("тэр үед") says it wherever it stands
    if not any(m.end == len(q) or not q[m.start].isascii() for m in find(q, {"t": lex.then})):
        return None
    for turn in reversed(history):
        if turn.role != "assistant":
            continue
        first = next((line for line in turn.content.splitlines() if line.strip()), "")
        day = _DAY.search(first)
        if day is None:
            return None
        said = _pattern(lex.then)
        asked = said.sub(f"as of {day.group(0)}", question, count=1)
        previous = prior_question(history[: history.index(turn)])
        if not topical(said.sub(" ", question)) and previous:
            return f"{previous.rstrip(' ?.!')} as of {day.group(0)}?"
        return asked
    return None


def rewrite(
    question: str, previous: str | None, priors: Sequence[Prior], lex: Lexicon | None = None
) -> str | None:
    """The question with its pronoun, ellipsis or missing subject resolved from the
    previous turn, or None when it needs none (or nothing of that turn resolves it)."""
    lex = lex or lexicon()
    if not priors:
        return None
    q = tokens(question)
    names_itself = any(w[:1].isupper() for w in question.split()[1:])
    for kind, person in (("person", True), ("other", False)):
        pronouns = [p for p in lex.pronouns.get(kind, ()) if not _place(p, lex)]
        if not says(q, pronouns) or names_itself:
            continue  # "and what is his role, Alex Kim's?": the question names its own
        target = next((p for p in priors if p.person == person), None)
        if target is None:
            return None
        return _capital(_put_name(_without_lead(question, lex), pronouns, target.title, lex))
    place = next((p for p in priors if not p.person), None)
    places = [p for p in lex.pronouns.get("other", ()) if _place(p, lex)]
    if place is not None and _at_end_or_native(question, places, lex):
        return _capital(_put_name(_without_lead(question, lex), places, place.title, lex))
    rest = _without_lead(question, lex)
    opened = rest != question.strip() or bool(_pattern(lex.follow_up_end).search(question))
    if previous is None or not opened:
        return None
    name = _pattern(lex.follow_up_end).sub("", rest).strip(" ?.!-")
    name = re.sub(r"-?(?:ийн|ын|ий|ы)$", "", name).strip()
    first = tokens(name)[:1]
    if first and says(first, lex.frame):  # "and what was decided?": a clause, no name
        if place is not None and not topical(name, lex, decisions=False) - _named_words(priors):
            return f"{place.title}: {_capital(rest)}"
        return None
    if not name or len(name.split()) > MAX_ELLIPTIC_WORDS:
        return None
    for prior in priors:
        for old in prior.names:
            at = re.search(rf"(?<!\w){re.escape(old)}", previous, re.IGNORECASE)
            if at is not None:
                return previous[: at.start()] + name + previous[at.end() :]
    return None


def _named_words(priors: Sequence[Prior]) -> set[str]:
    return {w for p in priors for n in p.names for w in tokens(n)}


def _place(word: str, lex: Lexicon) -> bool:
    """A pronoun of place ("there", "тэнд"): the lexicon's ``place`` words."""
    return word in lex.place


def _at_end_or_native(question: str, places: Sequence[str], lex: Lexicon) -> bool:
    """A place pronoun that stands at the question's end ("what was decided there?"; not
    "was there a follow-up?"), or one of a language that puts it anywhere ("тэнд")."""
    q = tokens(question)
    for match in find(q, {"place": places}):
        if match.end == len(q) or not q[match.start].isascii():
            return True
    return False


def _put_name(text: str, pronouns: Sequence[str], title: str, lex: Lexicon) -> str:
    """``text`` with each pronoun written as ``title`` (a possessive as "title's"; a place
    at the end as "at title")."""

    def put(found: re.Match[str]) -> str:
        word = found.group(0).lower()
        if word in lex.possessive:
            return f"{title}'s"
        if _place(word, lex) and word.isascii():
            return f"at {title}"
        return title

    return _pattern(pronouns).sub(put, text)
