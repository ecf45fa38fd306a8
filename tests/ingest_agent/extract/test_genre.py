"""A note's genre, read in one place, and an exchange of messages read message by message."""

from __future__ import annotations

import datetime as dt

from ingest_agent.extract.genre import Genre, messages, read_genre, read_note
from ingest_agent.extract.note import split_source
from ingest_agent.records import Source

THREAD = """From: Luis Hernandez <luis@helix.example>
To: Maya Patel <maya@helix.example>
Date: 2021-04-15 09:12
Subject: Pivot to API-first

Hi Maya,

We decided to pivot to an API-first architecture.

Luis
COO

---

From: Maya Patel <maya@helix.example>
To: Luis Hernandez <luis@helix.example>
Date: 2021-04-16 10:05
Subject: Re: Pivot to API-first

> We decided to pivot to an API-first architecture.
Thanks, the customers are on board.

Best,
Maya
"""


def test_the_converter_says_the_genre_else_the_shape_of_the_note_does() -> None:
    assert read_genre({"genre": "transcript"}, []).name == "transcript"
    assert read_genre({}, split_source(THREAD).lines).name == "email"
    chat = ["**Priya Shah** 16:02", "Hi.", "", "**Alex Kim** 16:20", "Thanks."]
    assert read_genre({}, chat).name == "chat"
    assert read_genre({"channel": "sales"}, ["Hello."]).name == "chat"
    # a meeting note's lone labelled lines are no mail, an incident's times no chat
    assert read_genre({}, ["Attendees: Ann Lee", "Date: 2026-01-02", "We met."]).name == "note"
    times = ["**Started:** 2021-05-22 14:00", "**Resolved:** 2021-05-22 16:00"]
    assert read_genre({}, times).name == "note"
    assert read_genre({}, ["*Sophia Liu* 09:02 AM", "Hi.", "*Arjun Mehta* 09:04 AM"]).name == "chat"


def test_a_message_written_all_as_a_quote_block_keeps_its_words() -> None:
    lines = [
        "*From:* Arjun Mehta <a@x>",
        "*To:* All Engineering",
        "",
        "> Hi all,",
        "> We ship on Friday.",
    ]
    [message] = messages(Genre("email"), lines, dt.date(2022, 9, 21))
    assert "We ship on Friday." in message.lines


def test_a_thread_is_its_messages_each_dated_when_sent_without_its_frame() -> None:
    found = messages(Genre("email"), THREAD.splitlines(), dt.date(2021, 1, 1))
    assert [(m.day.isoformat(), m.sender) for m in found] == [
        ("2021-04-15", "Luis Hernandez <luis@helix.example>"),
        ("2021-04-16", "Maya Patel <maya@helix.example>"),
    ]
    words = ["\n".join(m.lines) for m in found]
    assert "From:" not in "".join(words) and "Subject:" not in "".join(words)
    assert "COO" not in words[0] and "Best" not in words[1]  # sign-offs
    assert ">" not in words[1] and "customers are on board" in words[1]  # no quoted reply


def test_a_chat_message_is_dated_by_its_own_line_not_by_the_dates_it_names() -> None:
    lines = [
        "**Priya Shah** 16:02",
        "The contract started 2026-12-01.",
        "",
        "↳ **Tom Becker** 2026-12-05 09:00",
        "Confirmed.",
        "[2026-12-06 10:15] @Maya: Booked for 2026-12-20.",
    ]
    found = messages(Genre("chat"), lines, dt.date(2026, 12, 4))
    said = [(m.day.isoformat(), m.sender) for m in found]
    assert said == [
        ("2026-12-04", "Priya Shah"),
        ("2026-12-05", "Tom Becker"),  # a reply, on its own day
        ("2026-12-06", "Maya"),
    ]
    assert found[-1].lines == ("Booked for 2026-12-20.",)


def test_a_mail_frame_pasted_into_a_chat_is_never_read_as_its_words() -> None:
    """A chat that pastes a mail keeps the mail's words, not its header block; a single
    labelled line ("Subject: pricing") is someone's own words."""
    text = (
        "---\ndate: 2022-02-09\n---\n\n**Slack thread - #engineering**\n\n"
        "*Sophia Liu* 09:02 AM  \n> Arjun, can you review the routing algorithm?\n\n"
        "*Arjun Mehta* 09:04 AM  \n> Sure. Subject: pricing, as discussed.\n\n---\n\n"
        "*From:* Sophia Liu <sophia@helix.example>  \n*To:* Arjun Mehta <arjun@helix.example>"
        "  \n*Subject:* Review request  \n\nPlease look at the routing algorithm today.\n"
    )
    _, genre, said = read_note(Source("notes/thread.md", text, "h", dt.date(2022, 2, 9)))
    read = "\n".join(s.text for s in said)
    assert genre.name == "chat" and said
    assert "From:" not in read and "To:" not in read and "Review request" not in read
    assert "Please look at the routing algorithm today." in read
    assert "Subject: pricing, as discussed." in read
