"""Evidence from raw source notes: a snippet cut into its speakers' sentences, each dated
by the day it speaks of (the note's date kept as when it was said), and a "when"
question answered from such a sentence with that day."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from memserver.timeparse.mentions import mention_reader
from read_agent.agent import MODE_EXTRACTIVE, Answer, ReadAgent
from read_agent.extractive.evidence import score
from read_agent.extractive.question import Reading
from read_agent.extractive.source_evidence import email_turns, from_source, shown_span, unaddressed
from read_agent.reading import Wants
from read_agent.tools.wire import Hit
from tests.fixtures.server import RunningServer
from tests.read_agent.conftest import RunAgent, write_note

NOW = dt.datetime.fromisoformat("2026-11-20T12:00:00+08:00")
SNIPPET = (
    "--- date: 2023-05-08 --- What's up with you? Caroline: I went to a LGBTQ support "
    "group yesterday and it was so powerful. Melanie: Wow, that's cool, Caroline! "
    "We're thinking about going camping next month."
)


def reading(*terms: str) -> Reading:
    return Reading("", Wants.WHEN, terms)


def test_a_sentence_is_dated_by_the_day_it_speaks_of_and_keeps_its_speaker() -> None:
    result = {"id": "source/session-01.md", "date": "2023-05-08", "snippet": SNIPPET}
    pieces = from_source(Hit.parse(result), 0, mention_reader("UTC"))
    assert [p.text for p in pieces] == [
        "What's up with you?",  # the snippet starts inside a turn: no speaker to give
        "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
        "Melanie: Wow, that's cool, Caroline!",
        "Melanie: We're thinking about going camping next month.",
    ]
    assert [(p.date, p.said) for p in pieces] == [
        ("2023-05-08", None),
        ("2023-05-07", "2023-05-08"),
        ("2023-05-08", None),
        ("2023-06", "2023-05-08"),
    ]
    assert pieces[1].line().render() == (
        "- 2023-05-07 (said on 2023-05-08) · Caroline: I went to a LGBTQ support group "
        "yesterday and it was so powerful. (direct, by Caroline) [source/session-01.md]"
    )


@pytest.mark.parametrize(
    "snippet",
    [
        "# #sales — 2026-10-20 **Alex Kim** 16:20 Anything open on support tickets? "
        "**Priya Shah** 16:24 Two low-priority ones, nothing that blocks the renewal.",
        "20/10/2026, 16:20 - Alex Kim: Anything open on support tickets? "
        "20/10/2026, 16:24 - Priya Shah: Two low-priority ones, nothing that blocks the renewal.",
        "Alex Kim (4:20 PM): Anything open on support tickets? "
        "Priya Shah (4:24 PM): Two low-priority ones, nothing that blocks the renewal.",
    ],
)
def test_a_chat_export_s_turns_keep_their_speakers(snippet: str) -> None:
    """The turn shapes the index knows as a conversation (``memserver.kb.chunks``)."""
    result = {"id": "source/slack/sales/2026-10-20.md", "date": "2026-10-20", "snippet": snippet}
    texts = [p.text for p in from_source(Hit.parse(result), 0, mention_reader("UTC"))]
    assert texts[-2:] == [
        "Alex Kim: Anything open on support tickets?",
        "Priya Shah: Two low-priority ones, nothing that blocks the renewal.",
    ]


def test_an_email_thread_s_headers_are_its_speakers_not_its_evidence() -> None:
    snippet = (
        "From: Luis Hernandez <luis@helix.example>  \n"
        "To: Maya Patel <maya@helix.example>  \n"
        "Date: 2021-04-15 09:12  \n"
        "Subject: Pivot to API-first architecture  \n\n"
        "Hi Maya, we have decided to pivot to an API-first architecture.\n\n"
        "Luis  \n---  \n\n"
        'From: "Maya Patel" <maya@helix.example>\n'
        "To: Luis Hernandez <luis@helix.example>\n"
        "Cc: Product Team <product@helix.example>\n"
        "Subject: Re: Pivot to API-first architecture\n\n"
        "Thanks. The customers are on board.\n"
    )
    result = {"id": "source/mail.md", "title": "Pivot", "date": "2021-04-15", "snippet": snippet}
    pieces = from_source(Hit.parse(result), 0, mention_reader("UTC"))
    assert [p.text for p in pieces] == [
        "Luis Hernandez: Hi Maya, we have decided to pivot to an API-first architecture.",
        "Luis Hernandez: Luis",
        "Maya Patel: Thanks.",
        "Maya Patel: The customers are on board.",
    ]
    # One "Date:" line in a meeting note is not an e-mail: the line stays what it was.
    assert email_turns("Date: 2021-04-15\nWe met.") == ["Date: 2021-04-15\nWe met."]


def test_whom_a_sentence_is_said_to_or_who_says_it_is_not_what_it_is_about() -> None:
    result = {"id": "source/session-01.md", "date": "2023-05-08", "snippet": SNIPPET}
    pieces = unaddressed(from_source(Hit.parse(result), 0, mention_reader("UTC")))
    asked = reading("caroline", "go", "lgbtq", "support", "group")
    by_text = {p.text: score(p, asked) for p in pieces}
    # Every word asked, the name as who said it, "went" as "go".
    assert by_text[pieces[1].text][1] == pytest.approx(1.0)
    assert by_text["Melanie: Wow, that's cool, Caroline!"] == (0.0, 0.0)
    assert by_text["What's up with you?"] == (0.0, 0.0)
    # What else the speaker says in the same turn counts, as a heading does.
    camping = reading("melanie", "camping", "cool")
    turn = [p for p in pieces if p.text.startswith("Melanie: We're thinking")]
    assert score(turn[0], camping)[1] == pytest.approx(1.0)
    assert score(turn[0], reading("caroline", "camping"))[1] == pytest.approx(0.5)


def test_a_sentence_of_a_better_ranked_note_leads_one_word_short() -> None:
    first = {"id": "source/a.md", "date": "2023-05-08", "snippet": "Ann: We sailed to Oban."}
    fourth = {"id": "source/b.md", "date": "2023-05-09", "snippet": "Ann: We sailed boats at Oban."}
    asked = reading("sailed", "boats", "oban")
    (a,), (b,) = (
        from_source(Hit.parse(first), 0, mention_reader("UTC")),
        from_source(Hit.parse(fourth), 3, mention_reader("UTC")),
    )
    assert score(a, asked)[1] < score(b, asked)[1]  # the fourth holds every word asked
    assert score(a, asked)[0] > score(b, asked)[0]  # the first is quoted before it


def test_a_span_is_shown_as_a_day_a_month_a_year_or_its_first_and_last_day() -> None:
    day = dt.date(2023, 5, 7)
    assert shown_span(day, day + dt.timedelta(days=1)) == "2023-05-07"
    assert shown_span(dt.date(2023, 6, 1), dt.date(2023, 7, 1)) == "2023-06"
    assert shown_span(dt.date(2022, 12, 1), dt.date(2023, 1, 1)) == "2022-12"
    assert shown_span(dt.date(2022, 1, 1), dt.date(2023, 1, 1)) == "2022"
    assert shown_span(dt.date(2023, 5, 1), dt.date(2023, 5, 8)) == "2023-05-01 to 2023-05-07"


@pytest.fixture(scope="module")
def talk(mcp_server: RunningServer) -> tuple[str, str, str]:
    """A conversation note of 2026-11-18 no page was made from: (its id, a unique
    group name, the speaker's name)."""
    word = f"zinnwald{uuid.uuid4().hex[:6]}"
    name = f"Orla{uuid.uuid4().hex[:4]}".capitalize()
    text = (
        f"---\ndate: 2026-11-18\n---\n{name}: Hi Sam! How are you?\nSam: Good, and you?\n"
        f"{name}: I went to the {word} support group yesterday and it was so powerful.\n"
        f"Sam: Wow, {name}, that's great!\n"
    )
    return write_note(mcp_server, f"notes/2026-11-18-{word}.md", text), word, name


def test_when_answered_from_a_note_states_the_day_it_speaks_of(
    mcp_server: RunningServer, talk: tuple[str, str, str], run_agent: RunAgent
) -> None:
    note_id, word, name = talk

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask(f"When did {name} go to the {word} support group?", now=NOW)

    answer: Answer = run_agent(mcp_server.token("*")[1], body, llm=False)
    assert answer.mode == MODE_EXTRACTIVE
    first = answer.text.splitlines()[0]
    assert first.startswith("2026-11-17 (said on 2026-11-18) · "), answer.text
    assert f"{name}: I went to the {word} support group yesterday" in first
    assert first.endswith(f"[{note_id}.md]") or first.endswith(f"[{note_id}]")
    assert note_id in [c.id for c in answer.citations]
    assert f"Wow, {name}" not in answer.text  # said to them, not about the group


def test_a_line_s_label_is_nobody_s_words() -> None:
    snippet = (
        "---\nauthor: Maria Lopez\n---\nDecision: usage-based pricing from 2026-10-15.\n"
        "Why: customers pay for shipments tracked, not for seats."
    )
    result = {"id": "source/meetings/pricing.md", "date": "2026-10-07", "snippet": snippet}
    pieces = from_source(Hit.parse(result), 0, mention_reader("UTC"))
    assert pieces and all(p.speaker in (None, "") for p in pieces)
    assert {p.author for p in pieces} == {"Maria Lopez"}  # the note's author, not "Why"
    assert pieces and all("by Why" not in p.line().render() for p in pieces)
