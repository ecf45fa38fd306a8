"""Mongolian vocabulary for :mod:`memserver.timeparse.parse` (regex fragments and word maps).

Mongolian marks time with case suffixes rather than prepositions: "өчигдрийн" (of
yesterday), "9-р сард" (in September), "2026-09-01-ээс хойш" (since 2026-09-01). So every
fragment here swallows the trailing suffix letters (``SFX``) itself, and the rules in
``timeparse`` never need a preposition for a Mongolian expression.
"""

from __future__ import annotations

# Cyrillic letters used in Mongolian (the patterns are compiled case-insensitively).
LETTERS = "а-яёөү"
# An attached case suffix: "15-нд", "өчигдрөөс", "сарын", "хоногийн".
SFX = rf"(?:-?[{LETTERS}]+)?"
# Word end for Cyrillic: not followed by another letter.
END = rf"(?![{LETTERS}])"

# Ordinal month names, longest first so "арван хоёрдугаар" wins over "хоёрдугаар".
MONTH_ORDINALS: dict[str, int] = {
    "арван хоёрдугаар": 12,
    "арван нэгдүгээр": 11,
    "аравдугаар": 10,
    "нэгдүгээр": 1,
    "хоёрдугаар": 2,
    "гуравдугаар": 3,
    "дөрөвдүгээр": 4,
    "тавдугаар": 5,
    "зургадугаар": 6,
    "долдугаар": 7,
    "наймдугаар": 8,
    "есдүгээр": 9,
}
_ORDINALS = "|".join(
    word.replace(" ", r"\s+") for word in sorted(MONTH_ORDINALS, key=len, reverse=True)
)
# "9-р сар", "9 сар", "9 дүгээр сар", "есдүгээр сар" (+ suffix: "сарын", "сард", "сараас").
MONTH = (
    rf"(?:(?P<mnum>\d{{1,2}})\s*(?:-?\s*р|-?\s*(?:дүгээр|дугаар))?|(?P<mword>{_ORDINALS}))"
    rf"\s*сар[{LETTERS}]*"
)
# "2026 оны " before a month or day; "2026 он/онд/оны/оноос" alone is a year.
YEAR_PREFIX = r"(?:(?P<year>\d{4})\s*(?:оны|он)\s+)?"
YEAR = rf"(?<![\w-])(?P<year>\d{{4}})\s*он(?:ы|д|оос|ыг)?{END}"
# A part of a period, after it ("2022 оны эхээр": early 2022; "10-р сарын дундуур":
# mid-October; "... сүүлээр": late; "... эхний хагаст": its first half): each start with
# (which part, of how many equal parts), the longest start that fits deciding.
PARTS: dict[str, tuple[int, int]] = {
    "эх": (0, 3), "эхний хагас": (0, 2), "дунд": (1, 3), "сүүл": (2, 3),
    "төгсгөл": (2, 3), "хоёрдугаар хагас": (1, 2), "сүүлийн хагас": (1, 2),
}  # fmt: skip
# the words a part is written with; "10-р сард эхэлсэн" (began in October) is none
PART_FORMS = (
    "эхээр", "эхэнд", "эхэн", "эхний хагас", "дундуур", "дунд", "сүүлээр", "сүүлчээр",
    "сүүлд", "төгсгөлд", "төгсгөлөөр", "хоёрдугаар хагас", "сүүлийн хагас",
)  # fmt: skip
PART = (
    r"(?P<mpart>(?:"
    + "|".join(
        f.replace(" ", r"\s+") + (f"[{LETTERS}]*" if f.endswith("хагас") else "")
        for f in sorted(PART_FORMS, key=len, reverse=True)
    )
    + rf"){END})"
)


def part_of(word: str) -> tuple[int, int] | None:
    """(which part, of how many) a Mongolian word after a period says, or None."""
    said = " ".join(word.lower().split())
    starts = [s for s in PARTS if said.startswith(s)]
    return PARTS[max(starts, key=len)] if starts else None


# The day after a month: "сарын 15", "сарын 15-нд", "сарын 15-ны".
DAY = rf"\s+(?P<day>\d{{1,2}})(?!\d){SFX}"

# Relative days: pattern -> offset from today in days.
RELATIVE_DAYS: tuple[tuple[str, int], ...] = (
    (rf"уржигд[аө]?р[{LETTERS}]*", -2),  # day before yesterday
    (rf"өчигд[өо]?р[{LETTERS}]*", -1),  # yesterday
    (rf"өнөөд[өо]?р[{LETTERS}]*", 0),  # today
    (rf"маргааш[{LETTERS}]*", 1),  # tomorrow
)

# Calendar periods: "өнгөрсөн долоо хоног", "энэ сар", "ирэх жил"; "7 хоног" is a week
# too, as people write it ("өнгөрсөн 7 хоногт": last week).
PERIOD_RELATIONS: dict[str, int] = {
    "өнгөрсөн": -1,
    "өмнөх": -1,  # the previous
    "энэ": 0,
    "ирэх": 1,
    "дараагийн": 1,
}
PERIOD_UNITS = r"(?:долоо|7)\s+хоног|сар|жил|улирал"
PERIOD = (
    rf"(?P<rel>{'|'.join(PERIOD_RELATIONS)})\s+(?P<unit>{PERIOD_UNITS})[{LETTERS}]*+"
    rf"(?!\s+\d)"  # "энэ сарын 15" is a day (RELATIVE_MONTH_DAY), not this month
)
# "энэ сарын 15" (the 15th of this month), "өнгөрсөн сарын 3-нд".
RELATIVE_MONTH_DAY = rf"(?P<rel>{'|'.join(PERIOD_RELATIONS)})\s+сарын{DAY}"
# One-word years: "ноднин" (last year), "уржнан" (the year before).
YEAR_WORDS: tuple[tuple[str, int], ...] = (
    (rf"ноднин[{LETTERS}]*", -1),
    (rf"уржнан[{LETTERS}]*", -2),
)

# Weekdays need "гараг/гариг": "Баасан" alone is also a common given name.
WEEKDAYS: dict[str, int] = {
    "даваа": 0,
    "мягмар": 1,
    "лхагва": 2,
    "пүрэв": 3,
    "баасан": 4,
    "бямба": 5,
    "ням": 6,
}
WEEKDAY = rf"(?:(?P<rel>өнгөрсөн|ирэх|энэ)\s+)?(?P<wd>{'|'.join(WEEKDAYS)})\s+гар[аи]г[{LETTERS}]*"

# Counts written as words, alone and before a noun ("арав хоног", "арван хоног": ten days).
NUMBERS: dict[str, int] = {
    "нэг": 1, "нэгэн": 1, "хоёр": 2, "гурав": 3, "гурван": 3, "дөрөв": 4, "дөрвөн": 4,
    "тав": 5, "таван": 5, "зургаа": 6, "зургаан": 6, "долоо": 7, "долоон": 7, "найм": 8,
    "найман": 8, "ес": 9, "есөн": 9, "арав": 10, "арван": 10, "хорь": 20, "хорин": 20,
    "гуч": 30, "гучин": 30,
}  # fmt: skip
# A count: digits or a word; "долоо хоног" is a week, not seven days.
COUNT = (
    r"(?P<n>\d{1,4}|"
    + "|".join(sorted(NUMBERS, key=len, reverse=True))
    + rf")(?![{LETTERS}])(?<!долоо(?=\s+хоног))"
)
# Rolling windows and "ago": "сүүлийн 10 хоног", "3 хоногийн өмнө", "2 долоо хоногийн өмнө".
UNITS = r"долоо\s+хоног|хоног|өдөр|өдр|сар|жил|улирал|цаг"
LAST_N = rf"(?:сүүлийн|өнгөрсөн(?!\s+7\s+хоног))\s+{COUNT}\s+(?P<unit>{UNITS})[{LETTERS}]*"
AGO = rf"(?<![{LETTERS}]){COUNT}\s+(?P<unit>{UNITS})[{LETTERS}]*\s+өмнө[{LETTERS}]*"

# Words that end a window phrase: "X-аас хойш", "X хүртэл", "X-ээс өмнө", "X-ийн дараа".
SINCE = rf"хойш[{LETTERS}]*"
UNTIL = rf"хүртэл[{LETTERS}]*"
BEFORE = rf"өмнө[{LETTERS}]*"
AFTER = rf"дараа{END}"
# "одоо" as the end of a range: "9-р сараас одоог хүртэл".
NOW = rf"одоо[{LETTERS}]*"

# Ordering and soft recency (applied after the window phrase is removed).
LATELY = rf"сүүлийн\s+үе[{LETTERS}]*|өнөө\s+үе[{LETTERS}]*"
SOFT = rf"яг\s+одоо{END}|саяхан|одоогийн|одоо{END}|шинэ\s+юу\s+байна|юу\s+шинэ[{LETTERS}]*"
NEWEST = (
    rf"хамгийн\s+(?:сүүлийн|сүүлчийн|сүүлд|шинэ){END}|сүүлийн{END}(?!\s+\d+\s+(?:{UNITS}))"
    rf"|сүүлчийн{END}|сүүлд{END}"
)
NEXT = rf"дараагийн{END}|удахгүй\s+болох{END}|ирэх{END}(?!\s+(?:{PERIOD_UNITS}))"
OLDEST = (
    rf"хамгийн\s+(?:анхны|анх|эхний|эртний){END}|анхны{END}|эхний{END}|(?<![{LETTERS}])анх{END}"
)

# Tense (timeparse.verb_tense): a past participle or past ending ("болсон", "уулзсан",
# "ирлээ"); a future ending at the end of the question, or a verbal noun before its
# question particle ("уулзах вэ").
PAST = rf"[{LETTERS}]{{2,}}(?:сан|сэн|сон|сөн|жээ|чээ|лаа|лээ|лоо|лөө){END}"
# A need or a deadline looks ahead too: "хэрэгтэй" (need), "гэхэд" (by a day).
FUTURE = (
    rf"[{LETTERS}]{{2,}}(?:на|нэ|но|нө){END}\s*(?:уу|үү|вэ|бэ)?\s*[?.!]?\s*$"
    rf"|[{LETTERS}]{{2,}}х\s+(?:вэ|бэ|уу|үү){END}"
    rf"|(?<![{LETTERS}])(?:хэрэгтэй|гэхэд){END}"
)

# Unit words (after lower-casing) -> unit key, checked with startswith, first hit wins.
UNIT_PREFIXES: tuple[tuple[str, str], ...] = (
    ("долоо", "week"),
    ("7 хоног", "week"),
    ("хоног", "day"),
    ("өдөр", "day"),
    ("өдр", "day"),
    ("сар", "month"),
    ("жил", "year"),
    ("улирал", "quarter"),
    ("цаг", "hour"),
)


def month_number(mnum: str | None, mword: str | None) -> int | None:
    """The month of a matched ``MONTH`` fragment (digits or ordinal word)."""
    if mnum is not None:
        return int(mnum)
    if mword is not None:
        return MONTH_ORDINALS.get(" ".join(mword.lower().split()))
    return None
