"""English vocabulary for :mod:`memserver.timeparse.parse` (regex fragments and word maps).

The Mongolian counterpart is :mod:`memserver.timeparse.mn`. Named groups in the
fragments (``mon``, ``wd``, ``n``, ``unit``, ``rel``) are read by the handlers in
``timeparse``.
"""

from __future__ import annotations

import calendar

MONTHS: dict[str, int] = {}
for _number, _name in enumerate(calendar.month_name[1:], start=1):
    MONTHS[_name.lower()] = _number
    MONTHS[_name[:3].lower()] = _number
MONTHS["sept"] = 9
MONTH = r"(?P<mon>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b\.?"
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
WEEKDAY = r"(?P<wd>" + "|".join(WEEKDAYS) + r")\b"
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "couple of": 2, "a few": 3, "few": 3,
}  # fmt: skip
# The number words that stand for no exact number ("a few days" is read as three): a
# sentence saying them gives no count.
VAGUE = frozenset({"a couple of", "couple of", "a few", "few"})
NUM = r"(?P<n>\d{1,4}|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + r")"
UNIT_PREFIXES = (
    ("weekend", "weekend"),
    ("day", "day"),
    ("week", "week"),
    ("month", "month"),
    ("quarter", "quarter"),
    ("year", "year"),
    ("hour", "hour"),
)
UNITS = r"(?P<unit>days?|weeks?|months?|quarters?|years?|hours?)\b"
RELATIONS = {
    "last": -1, "previous": -1, "the previous": -1, "past": -1, "this past": -1,
    "this": 0, "current": 0, "the current": 0, "next": 1, "coming": 1, "this coming": 1,
    "the coming": 1, "the next": 1,
}  # fmt: skip
REL = r"(?P<rel>" + "|".join(sorted(RELATIONS, key=len, reverse=True)) + r")"
RELATIVE_DAYS: tuple[tuple[str, int], ...] = (
    (r"(?:the\s+)?day\s+before\s+yesterday", -2),
    (r"yesterday|last\s+night", -1),
    (r"today|tonight|this\s+(?:morning|afternoon|evening)", 0),
    (r"(?:the\s+)?day\s+after\s+tomorrow", 2),
    (r"tomorrow", 1),
)
ORD = r"(?:st|nd|rd|th)?"
# A part of a period, as (which part, of how many equal parts): "early 2022" is the
# first third of 2022, "the second half of October" its last half.
PARTS: dict[str, tuple[int, int]] = {
    "early": (0, 3), "beginning of": (0, 3), "start of": (0, 3),
    "mid": (1, 3), "middle of": (1, 3),
    "late": (2, 3), "end of": (2, 3),
    "first half of": (0, 2), "second half of": (1, 2),
}  # fmt: skip
# "by the end of July" is a deadline, not the end of July (FUTURE)
PART = (
    r"(?:(?<!\bby\s)|(?!(?:the\s+)?end\b))(?:(?<!\bby\sthe\s)|(?!end\b))"
    r"\b(?:the\s+)?(?P<part>"
    + "|".join(sorted(PARTS, key=len, reverse=True)).replace(" ", r"\s+")
    + r")"
)
# Days of the month as ordinal words ("the first of November", "the twenty-third of May").
_UNITS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]
_TEENS = [
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
]
ORDINAL_DAYS: dict[str, int] = {
    **{w: n for n, w in enumerate(_UNITS, start=1)},
    **{w: n for n, w in enumerate(_TEENS, start=10)},
    "twentieth": 20,
    "thirtieth": 30,
    **{f"twenty{sep}{w}": 20 + n for n, w in enumerate(_UNITS, start=1) for sep in "- "},
    **{f"thirty{sep}first": 31 for sep in "- "},
}
ORDINAL_DAY = r"(?P<dw>" + "|".join(sorted(ORDINAL_DAYS, key=len, reverse=True)) + r")"
NUMERIC_DATE = (
    r"(?<![\w.-])(?:\d{4}[./]\d{1,2}[./]\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{4}"
    r"|\d{1,2}-[a-z]{3,9}-\d{4})(?![\w-])"
)

# Tense of a question or a sentence (timeparse.verb_tense): past auxiliaries, common
# irregular pasts and regular "-ed" forms; future auxiliaries and "going (to)".
_NOT_PAST = "need|feed|seed|speed|bed|red|shed|weed|proceed|exceed|succeed|indeed|breed"
PAST = (
    r"\b(?:did|didn['’]t|was|wasn['’]t|were|weren['’]t|had|went|came|got|made|saw|took|met"
    r"|gave|found|told|said|bought|thought|felt|began|left|won|ran|wrote|ate|drove|sold|spent"
    r"|paid|built|brought|kept|lost|heard|taught|caught|flew|swam|sang|wore|chose|became"
    r"|ago|yesterday)\b"
    rf"|\b(?!(?:{_NOT_PAST})\b)[a-z]{{2,}}ed\b"
)
# A need, a proposal or a deadline looks ahead too ("we need a price list by the end of
# July", "let's keep that for Wednesday's review").
FUTURE = (
    r"\b(?:will|won['’]t|shall|gonna|going|plans?\s+to|planning|about\s+to|upcoming"
    r"|tomorrow|needs?\s+(?:to|a|an|the|our|it|this|that)|let['’]s|due(?!\s+to\b)|deadline"
    r"|at\s+the\s+latest|by\s+the\s+end\s+of)\b"
    r"|['’]ll\b"
)
