"""Names a question writes in Cyrillic matched with titles written in Latin letters."""

from __future__ import annotations

import datetime as dt
from typing import Any

from memserver.kb.translit import MOST_SPELLINGS, cyrillic_spellings
from memserver.search.cross_script import cyrillic_names, latin_names

DAY = dt.date(2026, 11, 1)


class Rows:
    """A connection whose one query answers ``rows`` and records its parameters."""

    def __init__(self, rows: list[tuple[str, str, str, dt.date | None]]) -> None:
        self.rows = rows
        self.params: dict[str, Any] = {}

    def execute(self, sql: str, params: dict[str, Any]) -> Rows:
        self.params = params
        return self

    def fetchall(self) -> list[tuple[str, str, str, dt.date | None]]:
        return self.rows


def test_a_cyrillic_name_gets_the_latin_words_and_pages_that_sound_like_it() -> None:
    conn = Rows(
        [
            ("companies/globex", "companies", "Globex", DAY),
            ("projects/globex-eta", "projects", "Globex ETA Rollout", DAY),
            ("people/priya-shah", "people", "Priya Shah", None),
            ("people/prince", "people", "Prince Hal", None),
            ("people/dash", "people", "—", None),  # a title of signs: no word, no error
            ("companies/номин", "companies", "Номин Трейд", None),  # Cyrillic: its alias
        ]
    )
    across, hits = latin_names(
        conn,  # type: ignore[arg-type]
        ["глобекстэй", "прия", "үнийн"],
        ["companies", "projects", "people", "notes"],
        people=["people"],
        asked=["глобекстэй", "прия", "үнийн"],
    )
    assert across == {"глобекстэй": ("globex",), "прия": ("priya",)}  # "үнийн" is price
    assert [h.id for h in hits] == ["companies/globex", "people/priya-shah"]
    assert hits and all(0.5 < h.score < 1.0 and h.detail == "transliterated_title" for h in hits)
    assert set(conn.params["starts"].split(" | ")) >= {"gl:*", "pr:*"}


def test_no_cyrillic_name_asks_nothing() -> None:
    conn = Rows([("companies/globex", "companies", "Globex", DAY)])
    assert latin_names(conn, ["globex", "price"], ["companies"]) == ({}, [])  # type: ignore[arg-type]
    assert conn.params == {}


def test_a_first_e_in_cyrillic_is_an_a_in_latin() -> None:
    conn = Rows([("people/alice-chen", "people", "Alice Chen", None)])
    across, hits = latin_names(
        conn,  # type: ignore[arg-type]
        ["элис"],
        ["people"],
        people=["people"],
        asked=["элис"],
    )
    assert across == {"элис": ("alice",)}
    assert [h.id for h in hits] == ["people/alice-chen"]
    assert {"al:*", "el:*"} <= set(conn.params["starts"].split(" | "))


def test_a_latin_name_is_spelled_as_mongolian_cyrillic_writes_it() -> None:
    assert cyrillic_spellings("Darkhan") == ("дархан",)
    assert cyrillic_spellings("Batbayar") == ("батбаяр",)
    assert "тэмүүлэн" in cyrillic_spellings("Temuulen")  # "u" is у or ү, "e" э or е
    assert "эрдэнэт" in cyrillic_spellings("Erdenet")
    assert len(cyrillic_spellings("Ouuououeoe")) == MOST_SPELLINGS  # bounded
    assert cyrillic_spellings("INV-2026") == () and cyrillic_spellings("Zoë") == ()


def test_only_names_of_five_letters_or_more_get_cyrillic_spellings() -> None:
    found = cyrillic_names(["darkhan", "tom", "meeting", "дархан"], {"darkhan", "tom", "дархан"})
    assert found == {"darkhan": ("дархан",)}  # "meeting" is no name; "tom" too short
