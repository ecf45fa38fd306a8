"""The dates a sentence mentions, read against its note's date (no database)."""

from __future__ import annotations

import datetime as dt

from memserver.timeparse.mentions import mention_reader


def test_mentioned_dates_are_read_against_the_notes_own_date() -> None:
    read = mention_reader("UTC")
    day = dt.date(2023, 5, 8)  # a Monday
    assert read("I went to a support group yesterday.", day) == [
        (dt.date(2023, 5, 7), dt.date(2023, 5, 8))
    ]
    assert read("We went camping last year.", day) == [(dt.date(2022, 1, 1), dt.date(2023, 1, 1))]
    # A bare weekday by the sentence's tense: the past one, or the coming one.
    assert read("We went hiking on Sunday.", day) == [(dt.date(2023, 5, 7), dt.date(2023, 5, 8))]
    assert read("I am going hiking on Sunday.", day) == [
        (dt.date(2023, 5, 14), dt.date(2023, 5, 15))
    ]
    assert read("Өчигдөр бид уулзсан.", day) == [(dt.date(2023, 5, 7), dt.date(2023, 5, 8))]
    assert read("Thanks, that was lovely.", day) == []
    both = read("In March 2021 and again yesterday we talked.", day)
    assert set(both) == {
        (dt.date(2021, 3, 1), dt.date(2021, 4, 1)),
        (dt.date(2023, 5, 7), dt.date(2023, 5, 8)),
    }


def test_as_of_a_day_in_a_note_is_that_day_not_all_before_it() -> None:
    read = mention_reader("UTC")
    day = dt.date(2026, 11, 19)
    assert read("The webhook is live as of today.", day) == [(day, day + dt.timedelta(days=1))]
    assert read("Until further notice, nothing before 2026-11-01 counts.", day) == []
