"""The extraction of example_kb checked against EXPECTED.md: field precision and recall.

Compared: the people table (role, company, reports_to) and the meetings table (date,
attendees, company), every value a page holds counted once (an attendee list counts
each name). A value is right when it is the expected one (a role may be worded more
or less fully; a link may be a title, an alias or a slug); a value where EXPECTED.md
has "–" is wrong. An attendee EXPECTED.md does not list is a person the source does not
state as attending (Alice Chen "only mentioned" on 2026-11-12); a meeting date other
than the expected one is a date the source does not state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest_agent.names import norm
from memserver.kb.page import parse_page

NONE = ("–", "-", "")


@dataclass
class Tally:
    right: int = 0
    wrong: list[str] = field(default_factory=list)
    expected: int = 0
    found: int = 0  # expected values present on the pages

    @property
    def precision(self) -> float:
        held = self.right + len(self.wrong)
        return self.right / held if held else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.expected if self.expected else 1.0


@dataclass
class Check:
    fields: dict[str, Tally] = field(default_factory=dict)
    unstated_people: list[str] = field(default_factory=list)  # attendees not in EXPECTED
    wrong_dates: list[str] = field(default_factory=list)
    missing_pages: list[str] = field(default_factory=list)

    def tally(self, name: str) -> Tally:
        return self.fields.setdefault(name, Tally())


def _rows(text: str, heading: str) -> list[list[str]]:
    lines = text.split(f"### {heading}", 1)[1].splitlines()[1:]
    rows = []
    for line in lines:
        if line.startswith("#"):
            break
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:]  # the header row


def _names(cell: str) -> list[str]:
    """``Alex Kim (Алекс Ким)`` -> both; ``a, b`` -> both."""
    inner = re.findall(r"\(([^)]*)\)", cell)
    outer = re.sub(r"\([^)]*\)", "", cell)
    return [n.strip() for part in [outer, *inner] for n in part.split(",") if n.strip()]


def _key(value: Any) -> str:
    text = str(value).strip().removeprefix("[[").removesuffix("]]")
    return norm(text.split("/", 1)[-1].replace("-", " "))


def _same(value: Any, names: Iterable[str]) -> bool:
    return _key(value) in {_key(n) for n in names}


def _role_ok(value: Any, expected: str) -> bool:
    got = norm(str(value))
    return any(got and (norm(e) in got or got in norm(e)) for e in _names(expected))


def _pages(knowledge: Path, folder: str) -> list[Any]:
    return [
        parse_page(p.read_text(encoding="utf-8"), str(p)) for p in (knowledge / folder).glob("*.md")
    ]


def _link(tally: Tally, at: str, value: Any, expected: str) -> None:
    if expected in NONE:
        if value not in (None, "", []):
            tally.wrong.append(f"{at}: {value!r} (none expected)")
        return
    tally.expected += 1
    if value in (None, "", []):
        return
    if _same(value, _names(expected)):
        tally.right += 1
        tally.found += 1
    else:
        tally.wrong.append(f"{at}: {value!r} (expected {expected})")


def check(expected_md: Path, knowledge: Path) -> Check:
    text = expected_md.read_text(encoding="utf-8")
    out = Check()
    people = {
        norm(n): page for page in _pages(knowledge, "people") for n in (page.title, *page.aliases)
    }
    # A person's names in either script ("Alex Kim (Алекс Ким)"): an attendee listed as
    # one is the same person written as the other.
    spellings = {
        _key(n): _names(row[0]) for row in _rows(text, "people (14)") for n in _names(row[0])
    }
    for title, role, company, reports_to, _ in _rows(text, "people (14)"):
        names = _names(title)
        page = next((people[norm(n)] for n in names if norm(n) in people), None)
        if page is None:
            out.missing_pages.append(f"people/{names[0]}")
            continue
        fields: Mapping[str, Any] = page.fields
        tally = out.tally("people.role")
        tally.expected += 1
        if fields.get("role"):
            ok = _role_ok(fields["role"], role)
            tally.right += ok
            tally.found += ok
            if not ok:
                tally.wrong.append(f"{names[0]}: {fields['role']!r} (expected {role})")
        _link(out.tally("people.company"), names[0], fields.get("company"), company)
        _link(out.tally("people.reports_to"), names[0], fields.get("reports_to"), reports_to)
    meetings = {s: page for page in _pages(knowledge, "meetings") for s in page.sources}
    for date, title, attendees, company, source in _rows(text, "meetings (15, all **must**)"):
        path = source.split(" ")[0]
        page = meetings.get(path)
        if page is None:
            out.missing_pages.append(f"meetings/{date} {title}")
            continue
        fields = page.fields
        if str(fields.get("date")) != date:
            out.wrong_dates.append(f"{path}: {fields.get('date')} (expected {date})")
        tally = out.tally("meetings.date")
        tally.expected += 1
        tally.right += str(fields.get("date")) == date
        tally.found += str(fields.get("date")) == date
        listed = [m for n in _names(attendees) for m in spellings.get(_key(n), [n])]
        tally = out.tally("meetings.attendees")
        tally.expected += len(_names(attendees))
        held = fields.get("attendees") or ()
        for name in held if isinstance(held, list | tuple) else [held]:
            if _same(name, listed):
                tally.right += 1
                tally.found += 1
            else:
                tally.wrong.append(f"{path}: {name!r}")
                out.unstated_people.append(f"{date} {title}: {name}")
        _link(out.tally("meetings.company"), path, fields.get("company"), company)
    return out


def report(result: Check) -> str:
    lines = ["field                 precision  recall   right/held   wrong"]
    for name, t in result.fields.items():
        held = t.right + len(t.wrong)
        lines.append(
            f"{name:<20} {t.precision:>9.2f} {t.recall:>7.2f} {t.right:>6}/{held:<6} "
            + "; ".join(t.wrong[:4])
            + (" ..." if len(t.wrong) > 4 else "")
        )
    lines.append(
        f"attendees the source does not state: {len(result.unstated_people)} {result.unstated_people}"
    )
    lines.append(
        f"meeting dates other than the source's: {len(result.wrong_dates)} {result.wrong_dates}"
    )
    lines.append(f"expected pages missing: {len(result.missing_pages)} {result.missing_pages}")
    return "\n".join(lines)
