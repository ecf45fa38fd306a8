"""Scoring for ``bench/eval_orgmem.py``, pure functions: evidence found (hit@k, cover@k)
and the key facts of a gold answer found in an answer.

A gold answer's **key facts** are what can be checked without a judge:

* its ISO dates (``2022-08-20``), found in an answer written as ISO or as "20 August
  2022", "August 20th, 2022", "20 Aug 2022", "2022/08/20" or "20/08/2022";
* its numbers with their unit ("90 days", "2-hour", "$2 M", "1,200 shipments"): the
  value with thousands separators and scale words read ("$2M" = "$2 million" =
  "$2,000,000"), the unit a time unit, a currency or a percent when one is written; an
  answer states the fact when it has the same value with the same unit (a bare value
  when the gold one has none);
* people's names (from the company's personas) that the gold answer names.

Identifiers (``ART-EV-2021-001-001``, ``P-0035``, ``EV-2022-012``), clock times and list
numbers ("1. meeting_transcript ...") are not facts and are removed first.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Keys of a gold answer that are notes for a judge or artefact ids, not the answer.
SKIPPED_KEYS = frozenset({"scope_note", "testimony_attribution"})

_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
_SPACES = re.compile(r"[\u00a0\u2007\u202f]")
_IDS = re.compile(r"\b(?:ART|ATM|EMG|CUST|EV|[PCQ])-[A-Za-z0-9-]*\d[A-Za-z0-9-]*")
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
_LIST_NUMBER = re.compile(r"^\s*\d{1,2}[.)]\s", re.MULTILINE)
_ISO = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_MONTH = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}(?: of)? {_MONTH},? (\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH} {_DAY},? (\d{{4}})\b", re.IGNORECASE)
_SLASH_YMD = re.compile(r"\b(\d{4})/(\d{1,2})/(\d{1,2})\b")
_SLASH_DMY = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_CURRENCY = {"$": "$", "€": "€", "£": "£", "usd": "$", "eur": "€", "gbp": "£"}
_SCALE = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
}
_UNITS = ("second", "minute", "hour", "day", "week", "month", "quarter", "year")
_NUMBER = re.compile(
    r"(?<![\w.,])(?P<cur>[$€£]|usd|eur|gbp)?\s?"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d+)?"
    r"(?:\s?(?P<scale>thousand|million|billion|bn|mn|[kKMB])(?![A-Za-z]))?"
    r"(?:\s?(?P<pct>%|percent\b))?"
    r"(?:[\s-](?P<unit>" + "|".join(_UNITS) + r")s?\b)?",
    re.IGNORECASE,
)


@dataclass(frozen=True, order=True)
class Fact:
    """One key fact: ``kind`` is date, number or name; ``value`` its normal form."""

    kind: str
    value: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.value}"


def clean(text: str) -> str:
    """Dashes and spaces of one kind, identifiers, clock times and list numbers removed."""
    text = _SPACES.sub(" ", _DASHES.sub("-", text))
    text = _LIST_NUMBER.sub(" ", _CLOCK.sub(" ", _IDS.sub(" ", text)))
    return text


def _day(year: str | int, month: str | int, day: str | int) -> str | None:
    try:
        return dt.date(int(year), int(month), int(day)).isoformat()
    except ValueError:
        return None


def dates_in(text: str) -> set[str]:
    """Every day ``text`` writes, in any of the spellings above, as ISO dates."""
    text = clean(text)
    found = {_day(*m.groups()) for m in _ISO.finditer(text)}
    found |= {_day(m[3], _MONTHS[m[2].lower()], m[1]) for m in _DAY_MONTH_YEAR.finditer(text)}
    found |= {_day(m[3], _MONTHS[m[1].lower()], m[2]) for m in _MONTH_DAY_YEAR.finditer(text)}
    found |= {_day(*m.groups()) for m in _SLASH_YMD.finditer(text)}
    found |= {_day(m[3], m[2], m[1]) for m in _SLASH_DMY.finditer(text)}
    return {d for d in found if d is not None}


def numbers_in(text: str) -> set[str]:
    """Every number ``text`` states that is not part of a date, as ``value`` or
    ``value unit`` ("90 day", "2000000 $", "12 %")."""
    text = _ISO.sub(" ", clean(text))
    text = _DAY_MONTH_YEAR.sub(" ", _MONTH_DAY_YEAR.sub(" ", text))
    out = set()
    for m in _NUMBER.finditer(text):
        value = float(m["int"].replace(",", "") + (m["frac"] or ""))
        scale = (m["scale"] or "").lower()
        if scale and not (m["cur"] or scale not in ("m", "b")):
            scale = ""  # "5 m" is metres, "5 B" a grade: a bare M or B scales money only
        value *= _SCALE.get(scale, 1.0)
        unit = _CURRENCY.get((m["cur"] or "").lower()) or ("%" if m["pct"] else None)
        unit = unit or (m["unit"] or "").lower() or None
        shown = str(int(value)) if value.is_integer() else f"{value:g}"
        out.add(f"{shown} {unit}" if unit else shown)
    return out


def names_in(text: str, people: Iterable[str]) -> set[str]:
    """The names of ``people`` that ``text`` writes (whole words, any case)."""
    flat = " ".join(clean(text).split()).lower()
    return {
        name
        for name in people
        if re.search(rf"(?<!\w){re.escape(' '.join(name.lower().split()))}(?!\w)", flat)
    }


def gold_text(gold: Any) -> str:
    """Every string of a structured gold answer, one a line (``SKIPPED_KEYS`` left out)."""
    if isinstance(gold, Mapping):
        return "\n".join(gold_text(v) for k, v in gold.items() if k not in SKIPPED_KEYS)
    if isinstance(gold, str):
        return gold
    if isinstance(gold, Sequence):
        return "\n".join(gold_text(v) for v in gold)
    return ""


def key_facts(gold: Any, people: Iterable[str]) -> tuple[Fact, ...]:
    """The key facts of a gold answer (see the module docstring), sorted."""
    text = gold_text(gold)
    facts = {Fact("date", d) for d in dates_in(text)}
    facts |= {Fact("number", n) for n in numbers_in(text)}
    facts |= {Fact("name", n) for n in names_in(text, people)}
    return tuple(sorted(facts))


def facts_found(facts: Sequence[Fact], answer: str, people: Iterable[str]) -> list[Fact]:
    """Those of ``facts`` that ``answer`` states."""
    dates, numbers = dates_in(answer), numbers_in(answer)
    names = names_in(answer, people)
    found = []
    for fact in facts:
        if fact.kind == "date":
            held = fact.value in dates
        elif fact.kind == "number":
            held = fact.value in numbers
        else:
            held = fact.value in names
        if held:
            found.append(fact)
    return found


# --------------------------------------------------------------------------- evidence


def distinct(items: Iterable[str]) -> list[str]:
    """``items`` in order, each once."""
    return list(dict.fromkeys(items))


def hit_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> bool:
    """Whether one of ``gold`` is among the first ``k`` distinct of ``ranked``."""
    return bool(set(distinct(ranked)[:k]) & set(gold))


def cover_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """The share of ``gold`` among the first ``k`` distinct of ``ranked``."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    return len(set(distinct(ranked)[:k]) & wanted) / len(wanted)
