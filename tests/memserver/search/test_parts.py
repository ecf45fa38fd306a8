"""A question asking several things, split into its parts and merged
(memserver/search/parts.py): pure functions, no database."""

from __future__ import annotations

import datetime as dt

import pytest

from memserver.search.parts import merge, part_questions, split_question
from memserver.search.types import SearchResult
from memserver.timeparse.parse import parse_time

NOW = dt.datetime(2026, 12, 1, 12, tzinfo=dt.UTC)


def core(text: str) -> str:
    return parse_time(text, now=NOW).query


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "Who signed the Nomin Trade contract, and when?",
            ["Who signed the Nomin Trade contract, when"],
        ),
        (
            "Who approved the pricing change and why did it happen?",
            ["Who approved the pricing change", "why did it happen"],
        ),
        (
            "What is the current refund policy? What did it replace, and when did it change?",
            ["What is the current refund policy", "What did it replace", "when did it change"],
        ),
        (
            "Who led the vendor decision, when did they decide, what else did they weigh, "
            "and what settled it?",
            [
                "Who led the vendor decision",
                "when did they decide",
                "what else did they weigh",
                "what settled it",
            ],
        ),
        (
            "Юу шийдсэн бэ? Хэзээ шийдсэн, хэн шийдсэн бэ?",
            ["Юу шийдсэн бэ", "Хэзээ шийдсэн", "хэн шийдсэн бэ"],
        ),
    ],
)
def test_a_question_splits_at_its_sentences_and_at_clauses_that_ask(
    question: str, parts: list[str]
) -> None:
    assert split_question(question) == parts


def test_names_in_a_list_and_plain_sentences_do_not_split() -> None:
    question = "What did Maya Patel, Luis Hernandez, and Arjun Mehta decide about Helix?"
    assert split_question(question) == [question.rstrip("?")]
    assert split_question("When did Caroline go to the support group?") == [
        "When did Caroline go to the support group"
    ]
    assert split_question("Prices rose 2.5 percent in Q3.") == ["Prices rose 2.5 percent in Q3"]


def test_more_than_four_parts_join_the_last_ones() -> None:
    question = "Who decided? When? Why did they? What changed? What came after? Who objected?"
    parts = split_question(question)
    assert parts == [
        "Who decided, When",
        "Why did they",
        "What changed",
        "What came after, Who objected",
    ]


def test_a_part_naming_nothing_borrows_the_subject_and_keeps_its_own_time_words() -> None:
    parts = split_question(
        "What is the current refund policy? What did it replace, and what did Bob Lee say "
        "on 2026-03-02?"
    )
    asked = part_questions(parts, core)
    assert asked[0] == "What is the current refund policy"  # "current" stays in its part
    assert asked[1] == "What did it replace What is the refund policy"  # not "current"
    assert asked[2] == "what did Bob Lee say on 2026-03-02"  # names its own subject
    assert parse_time(asked[0], now=NOW).soft_recency
    assert not parse_time(asked[1], now=NOW).soft_recency
    assert parse_time(asked[2], now=NOW).window is not None


def result(rid: str, *labels: str) -> SearchResult:
    folder = "source" if rid.startswith("source/") else rid.split("/")[0]
    return SearchResult(rid, rid, folder, None, 1.0, "text", {}, labels)


def note(name: str) -> str:
    return f"source/{name}.md"


@pytest.mark.parametrize("count", [2, 3, 4])
def test_the_merge_keeps_every_parts_first_page_and_note(count: int) -> None:
    """Whatever the other lists agree on, each part's first page and first note are in
    the merged response, each kind within its quota; the whole question's pinned page
    stays first."""
    shared_pages = [f"meetings/m{i}" for i in range(12)]
    shared_notes = [note(f"n{i}") for i in range(12)]
    whole = [result("people/pinned", "pinned")] + [
        result(i) for i in [*shared_pages, *shared_notes]
    ]
    lists = [(1.0, whole)]
    for p in range(count):
        own = [result(f"decisions/only-part-{p}"), result(note(f"only-part-{p}"))]
        lists.append((1.0, [*own, *(result(i) for i in [*shared_pages, *shared_notes])]))
    merged, _ = merge(lists, 10, None, lambda r: 10)
    got = [r.id for r in merged]
    assert got[0] == "people/pinned" and len(got) <= 10
    for p in range(count):
        assert f"decisions/only-part-{p}" in got and note(f"only-part-{p}") in got
    assert sum(r.folder == "source" for r in merged) == 5
    assert merged[1].score == 1.0 or merged[0].score == 1.0


def test_a_result_found_by_more_parts_ranks_higher() -> None:
    lists = [
        (1.0, [result("meetings/a"), result("meetings/b"), result("meetings/c")]),
        (1.0, [result("meetings/c"), result("meetings/d")]),
        (1.0, [result("meetings/c"), result("meetings/b")]),
    ]
    merged, _ = merge(lists, 10, None, lambda r: 10)
    assert [r.id for r in merged][:2] == ["meetings/c", "meetings/b"]
    assert merge([], 10, None, lambda r: 10) == ([], 0)
