"""The words of a correction, read without a model: a later record saying an earlier
one was wrong, amended or revised, and, for an incident, what its root cause now is.

Each reader takes one sentence (plain text) and returns only what the words say;
nothing is guessed. English and Mongolian.

- :func:`correction`: "amend the 2026-07-15 decision record", "correct the earlier
  misunderstanding", "clarified that the ... was a miscommunication" ("clarifying the
  change", "the rule was corrected", "we ruled out X" are none), "we now understand", "previously we
  believed", "the correct account is", "revised"; "засварлав",
  "залруулсан", "тодруулав", "үгүйсгэв", "өмнө нь ... гэж үзэж байсан", "буруу
  ойлголцол". A negated or hypothetical mention ("did not amend", "might revise") is none.
- :func:`names_earlier`: whether the words point at an earlier record ("the earlier
  decision", "the original note", "the preliminary report", "өмнөх шийдвэр").
- :func:`revised_cause`: "the actual root cause of the outage was X, not Y", "X was the
  root cause", "previously we believed Y", "Y was ruled out"; "жинхэнэ шалтгаан нь X
  байсан", "Y гэсэн таамаг үгүйсгэгдсэн": the cause now (X) and the one before (Y).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A correction is said in a sentence of ordinary length: the readers look at this much
# of one, so a note of one long unpunctuated line costs linear time, not quadratic.
SENTENCE_CHARS = 1000

_CUE = re.compile(
    r"\b(?P<en>amend(?:s|ed|ing|ment)?|retroactively"
    r"|correct(?:s|ed|ing)?\s+(?:the|our|an?)\s+(?:earlier|previous|original|initial|prior|first)"
    r"|correction\s+(?:of|to)\s+(?:the|our)\b"
    r"|clarif(?:y|ies|ied)\s+that|clarification|revis(?:e|es|ed|ing|ion)"
    r"|mis(?:communication|understanding|interpret\w*|diagnos\w*|reported)"
    r"|(?:we\s+)?now\s+(?:understand|know)\s+that"
    r"|previously\s+(?:we\s+)?(?:believed|thought|assumed|suspected)"
    r"|the\s+correct\s+account|was\s+(?:wrong|incorrect|inaccurate|a\s+mistake))\b"
    r"|(?P<mn>засвар\w*|залруул\w*|тодруул\w*|үгүйсгэ\w*|нэмэлт\s+өөрчлөлт\w*"
    r"|буруу\s+ойлгол\w*|буруу\s+ойлго\w*|андуур\w*|өмнө\s+нь\s+[^.;]*?гэж\s+(?:үзэж|бодож)\s+байсан)",
    re.IGNORECASE,
)
# "did not amend", "whether to revise", "might clarify": no correction made.
_NOT = re.compile(
    r"\b(?:not|n['’]t|never|no|whether|if|might|may|could|would|should\s+we|unless)\s+"
    r"(?:\w+\s+){0,2}$"
    r"|(?:биш|үгүй)\s+$",
    re.IGNORECASE,
)
_EARLIER = re.compile(
    r"\b(?:earlier|previous|prior|original|initial|preliminary|first|old)\s+(?:\w+\s+){0,2}"
    r"(?:decision|record|report|account|note|summary|plan|understanding|diagnosis|entry"
    r"|finding|claim|version|misunderstanding)s?\b"
    r"|өмнөх\s+\w+|анхны\s+\w+",
    re.IGNORECASE,
)
_CAUSE = r"(?:root\s+cause|underlying\s+cause|cause)"
_CAUSE_WAS = re.compile(
    rf"\b(?:actual|real|true|correct|revised|corrected|confirmed)\s+{_CAUSE}"
    r"(?:\s+of\s+[^,.;]{1,80}?)?\s+(?:was|is|has\s+been)\s+(?:determined\s+to\s+be\s+|found\s+to\s+be\s+)?"
    r"(?P<cause>[^.;]+?)(?:,?\s+(?:and\s+)?not\s+(?P<old>[^.;,]+))?(?:[.;]|$)",
    re.IGNORECASE,
)
_WAS_CAUSE = re.compile(
    r"(?:^|\bthat\s+|,\s*(?:but\s+|and\s+)?|\bbut\s+(?:as\s+of\s+\w+\s+)?|:\s*)"
    r"(?P<cause>(?:the|a|an)\s+(?:(?!\bthat\b)[^.;,:]){3,90}?)\s+(?:was|is)\s+(?:the\s+|in\s+fact\s+the\s+)?"
    r"(?:actual\s+|real\s+|true\s+)?root\s+cause\b",
    re.IGNORECASE,
)
_OLD_CAUSE = re.compile(
    r"\b(?:previously|originally|initially|at\s+first)\s+(?:we\s+|the\s+team\s+)?"
    r"(?:believed|thought|assumed|suspected|attributed\s+(?:it|the\s+\w+)\s+to)\s+(?:that\s+)?"
    r"(?P<a>[^.;,]+?)(?:\s+(?:was|were)\s+(?:the\s+)?(?:culprit|cause|root\s+cause|to\s+blame)\b|[.;,]|$)"
    r"|\b(?:the\s+)?previously\s+suspected\s+(?P<b>[^.;,]+?)\s+(?:was|is|has\s+been)\s+ruled\s+out"
    r"|(?P<c>(?:the|a|an)\s+[^.;,:]{3,80}?)\s+(?:hypothesis\s+)?(?:was|is|has\s+been)\s+ruled\s+out",
    re.IGNORECASE,
)
_MN_CAUSE = re.compile(
    r"(?:жинхэнэ|үндсэн|бодит)\s+шалтгаан\s+нь\s+(?P<cause>[^.;]+?)\s+(?:байсан|байв|байна|юм)"
)
_MN_OLD = re.compile(
    r"(?P<old>[^.;,]+?)\s+(?:гэсэн\s+)?(?:таамаг(?:лал)?\s+|хувилбар\s+)?(?:нь\s+)?"
    r"(?:үгүйсгэгдсэн|үгүйсгэгдэв|үгүйсгэв|үгүйсгэлээ)"
    r"|өмнө\s+нь\s+(?P<mn_old>[^.;]+?)\s+гэж\s+(?:үзэж|бодож)\s+байсан"
)


@dataclass(frozen=True)
class Cause:
    """What a sentence says an incident's root cause now is, and what it was thought to be."""

    now: str
    before: str  # "" when the sentence does not say


def correction(sentence: str) -> re.Match[str] | None:
    """The cue of a sentence saying an earlier record is corrected, unless negated."""
    sentence = sentence[:SENTENCE_CHARS]
    for match in _CUE.finditer(sentence):
        if not _NOT.search(sentence[: match.start()]):
            return match
    return None


def names_earlier(sentence: str) -> bool:
    """Whether ``sentence`` names an earlier record ("the earlier decision")."""
    return _EARLIER.search(sentence[:SENTENCE_CHARS]) is not None


def revised_cause(sentence: str) -> Cause | None:
    """The root cause a sentence says an incident had after all (see the module
    docstring); None when it states no cause with a correction cue."""
    sentence = sentence[:SENTENCE_CHARS]
    before = _old_cause(sentence)
    found = _CAUSE_WAS.search(sentence)
    if found is not None:
        return Cause(_tidy(found.group("cause")), _tidy(found.group("old") or "") or before)
    found = _MN_CAUSE.search(sentence)
    if found is not None:
        return Cause(_tidy(found.group("cause")), before)
    found = _WAS_CAUSE.search(sentence)
    if found is not None and (before or correction(sentence) is not None):
        return Cause(_tidy(found.group("cause")), before)
    return None


def _old_cause(sentence: str) -> str:
    for pattern in (_OLD_CAUSE, _MN_OLD):
        found = pattern.search(sentence)
        if found is not None:
            groups = [g for g in found.groups() if g]
            return _tidy(groups[0]) if groups else ""
    return ""


def _tidy(text: str) -> str:
    words = text.replace("**", "").split()
    while words and words[0].lower() in ("the", "a", "an", "that", "we", "believed"):
        words = words[1:]
    return " ".join(words).strip(" ,.;:—–-")
