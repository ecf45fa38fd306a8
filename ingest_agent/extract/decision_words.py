"""The words of a decision, read without a model: who decided, the options weighed, the
reason, the day, and the earlier decision it reverses or supersedes.

Each reader takes plain text (one list item, one sentence, or a section) and returns
only what the words say; nothing is guessed. English and Mongolian.

- :func:`logistics`: "agreed to put X on the agenda / schedule a call / meet again" plans a
  meeting and is no decision.
- :func:`deciders`: "Decided by Maria Lopez, Alex Kim and Tom Becker", "approved by
  X", "agreed by X", "X approved ...", "X and Y decided ...".
- :func:`alternatives`: "instead of A", "rather than A", "we considered / compared A, B
  and C (models)".
- :func:`rationale`: "because ...", "driven by ...", "due to ...", "in response to ...".
- :func:`reversal`: "reverses / supersedes / replaces <the earlier decision>", "we're
  replacing X with Y", "цуцалж", "орлуулж": the quoted title, the day and the words
  naming what it replaces, and whether it is reversed or superseded by a refined version.
  A negated or hypothetical mention ("did not reverse", "considered reversing") is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A sentence whose verb decides: "we decided to", "agreed to", "approved", "will move to".
DECIDING = re.compile(
    r"\b(?:decided|agreed\s+(?:to|that|on)|approved|chose\s+to|opted\s+(?:to|for)"
    r"|(?:convened|met|gathered)\s+(?:\w+\s+){0,2}?to\s+decide(?:\s+that)?"
    r"|will\s+move\s+to|are\s+moving\s+to|['’]re\s+moving\s+to|(?:are|['’]re)\s+replacing"
    r"|signed\s+off\s+on)\b"
    r"|шийдвэрлэв|шийдвэрлэсэн|шийдвэрлэлээ|шийдлээ|тохиролцов|тохиролцсон|тохиролцлоо"
    r"|баталсан|баталлаа|батлав",
    re.IGNORECASE,
)
# Words before a deciding verb that make it no decision ("not decided", "if approved").
_UNDECIDED = re.compile(
    r"\b(?:not|n['’]t|never|no|yet\s+to|whether|if|until|unless|to\s+be|pending|once"
    r"|believed|thought|assumed)\s+(?:\w+\s+){0,2}$"  # "we believed we decided": a past belief
    r"|\b(?:previously|believed)\b[^.;!?]{0,80}$"  # "previously we believed we had ... and decided"
    r"|\b(?:get|gets|got|getting|be|been|being|is|are|was|were)\s+(?:it\s+|them\s+)?$"
    r"|\b(?:it|them|this|that)\s+$|^\s*as\s+$|[,;(]\s*as\s+$"
    r"|\b(?:the|an?|our|their|its|pre)[\s-]+$"  # "the approved tech stack": an adjective
    r"|^\W*(?:subject|re|fwd?)\s*:",  # an e-mail's subject line is no decision taken
    re.IGNORECASE,
)
_NAME = r"[A-ZА-ЯЁӨҮ][\w'’-]*(?:[ \t]+[A-ZА-ЯЁӨҮ][\w'’-]*){0,3}"
_AND = r"\s*(?:,\s*(?:and\s+)?|\band\b|&|\bба\b|\bболон\b)\s*"  # "X, Y, and Z"
_NAMES = rf"{_NAME}(?:{_AND}{_NAME})*"
_BY = re.compile(
    rf"\b(?i:decided|approved|agreed|signed\s+off)\s+(?i:on\s+)?(?i:by)\s+(?P<names>{_NAMES})"
)
_SUBJECT_VERB = re.compile(
    rf"(?:^|[.;:]\s+)(?P<names>{_NAMES})\s+(?:approved|decided|signed\s+off"
    r"|(?:convened|met|gathered)\s+(?:\w+\s+){0,2}?to\s+decide)\b"
)
_SPLIT_NAMES = re.compile(_AND)
_NOT_PEOPLE = frozenset({"we", "they", "the team", "team", "everyone", "all", "the board"})

_INSTEAD = re.compile(r"\b(?:instead\s+of|rather\s+than)\s+(?P<alt>[^,.;:()]+)", re.IGNORECASE)
_WEIGHED = re.compile(
    r"\b(?:considered|compared|weighed|evaluated|looked\s+at)\s+(?P<list>[^.;:()]+)",
    re.IGNORECASE,
)
_GENERIC_TAIL = re.compile(
    r"\s+(?:models?|options?|approaches|approach|plans?|alternatives?|vendors?|tools?)$",
    re.IGNORECASE,
)
_LIST_SPLIT = re.compile(r"\s*(?:,|\band\b|\bor\b|/)\s*", re.IGNORECASE)

_BECAUSE = re.compile(
    r"\b(?:because(?:\s+of)?|driven\s+by|due\s+to|in\s+response\s+to|given\s+that)\s+"
    r"(?P<why>[^.;]+)"
    r"|(?P<mn>[^.;]{4,}?)\s+(?:учраас|учир|шалтгаанаар)\b",
    re.IGNORECASE,
)

_REVERSES = re.compile(
    r"\b(?P<verb>revers(?:es|ed|ing|e)|overturn(?:s|ed|ing)?|supersed(?:es|ed|ing|e)"
    r"|replac(?:es|ed|ing|e)|refines?|cancels?|cancelled|canceled)\b"
    r"|(?P<mn>цуцалж|цуцалсан|цуцлав|цуцаллаа|цуцална|орлуулж|орлуулсан|орлуулна|орлоно)",
    re.IGNORECASE,
)
_NO_REVERSAL = re.compile(
    r"\b(?:not|n['’]t|never|no|whether|if|considered|consider|might|may|could|would)\s+"
    r"(?:\w+\s+){0,2}$",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"[\"“«]([^\"”»]{3,120})[\"”»]")
_REFINED = re.compile(
    r"\b(?:supersed\w*|refine\w*|revis\w*|updated\s+version|amend\w*)|шинэчил", re.IGNORECASE
)
_REPLACING_WITH = re.compile(
    r"\breplac(?:es|ed|ing|e)\s+(?P<old>[^,.;()]+?)\s+with\s+(?P<new>[^,.;()]+)", re.IGNORECASE
)


# What a meeting agrees about its own next meeting is a plan, not a decision of the
# company: "put X on the agenda", "schedule / set up / book a call", "meet again".
_LOGISTICS = re.compile(
    r"^\s*(?:to\s+)?(?:put|add|bring|take)\b[^.;]*\b(?:agenda|next\s+(?:meeting|call|sync))\b"
    r"|^\s*(?:to\s+)?(?:schedule|set\s+up|book|arrange|hold|have)\b[^.;]*"
    r"\b(?:meeting|call|review|sync|session|check-?in|follow-?up|workshop)\b"
    r"|^\s*(?:to\s+)?(?:meet|reconvene|regroup|talk|speak)\s+(?:again|next|later|on|in)\b"
    r"|хөтөлбөрт|товло|дахин\s+уулз|уулзахаар",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Reversal:
    """What a decision's words say it reverses or supersedes."""

    status: str  # "reversed" | "superseded"
    quoted: str | None  # a title in quotes
    words: str  # the words naming the earlier decision (or what it replaces)
    sentence: str


def deciding(sentence: str) -> re.Match[str] | None:
    """The deciding verb of a sentence, unless the words before it negate it."""
    for match in DECIDING.finditer(sentence):
        if not _UNDECIDED.search(sentence[: match.start()]):
            return match
    return None


def logistics(what: str) -> bool:
    """Whether the words a deciding verb governs only plan a meeting (its agenda, its
    date, meeting again): "we agreed to put a pricing review on the agenda" is no decision."""
    return _LOGISTICS.search(what.strip()) is not None


def deciders(text: str) -> list[str]:
    """The names the text says decided (as written; the caller resolves them)."""
    found: list[str] = []
    for pattern in (_BY, _SUBJECT_VERB):
        for match in pattern.finditer(text):
            for name in _SPLIT_NAMES.split(match.group("names")):
                name = name.strip(" .")
                if name and name.lower() not in _NOT_PEOPLE and name not in found:
                    found.append(name)
        if found:
            return found
    return found


def alternatives(text: str) -> list[str]:
    """The options the text says were weighed and not chosen (or all those compared)."""
    out: list[str] = []
    for match in _INSTEAD.finditer(text):
        out.append(_tidy(match.group("alt")))
    for match in _WEIGHED.finditer(text):
        items = _LIST_SPLIT.split(_GENERIC_TAIL.sub("", match.group("list").strip()))
        out.extend(_tidy(_GENERIC_TAIL.sub("", item)) for item in items)
    return [a for a in dict.fromkeys(out) if a and len(a.split()) <= 8]


def rationale(text: str) -> str | None:
    """The reason the text gives ("because ...", "due to ..."), else None."""
    match = _BECAUSE.search(text)
    if match is None:
        return None
    why = match.group("why") or match.group("mn")
    why = _tidy(why or "")
    return why or None


def reversal(text: str) -> Reversal | None:
    """The earlier decision the text says is reversed or superseded, if it says so."""
    for match in _REVERSES.finditer(text):
        if _NO_REVERSAL.search(text[: match.start()]):
            continue
        verb = (match.group("verb") or match.group("mn") or "").lower()
        after = text[match.end() :]
        quoted = _QUOTED.search(after) or _QUOTED.search(text)
        with_ = _REPLACING_WITH.match(text[match.start() :])
        words = with_.group("old") if with_ else re.split(r"[:;()]", after, maxsplit=1)[0]
        if match.group("mn"):
            words = text[: match.start()]  # Mongolian: the object comes before the verb
        refined = verb.startswith(("supersed", "refine")) or bool(_REFINED.search(text))
        status = "superseded" if refined and not verb.startswith("revers") else "reversed"
        return Reversal(status, quoted.group(1).strip() if quoted else None, _tidy(words), text)
    return None


def _tidy(text: str) -> str:
    words = text.replace("**", "").split()
    while words and words[0].lower() in ("the", "a", "an", "our", "this", "that", "to"):
        words = words[1:]
    return " ".join(words).strip(" ,.;:—–-")
