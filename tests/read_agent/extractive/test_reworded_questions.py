"""The example's questions asked in other words, as a new user asks them: the boss, the
job title, who leads, who came, the Mongolian forms, a section in other words, a
follow-up with no subject of its own, and no disagreement across subjects."""

from __future__ import annotations

import pytest

from read_agent.extractive.reply import NO_SENTENCE
from read_agent.reading.conversation import Turn
from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


@pytest.mark.parametrize(
    ("question", "lead"),
    [
        ("Who is Bob Martinez's boss?", "Bob Martinez — reports to: Dana Whitfield"),
        ("Боб Мартинезийн дарга хэн бэ?", "Bob Martinez — reports to: Dana Whitfield"),
        ("What's Bob's job title now?", "Bob Martinez — role: VP of Operations"),
        ("What is Bob Martinez's current position?", "Bob Martinez — role: VP of Operations"),
        ("Who manages Priya Shah?", "Priya Shah — reports to: Alex Kim"),
        ("Who leads the Mongolian localization work?", "Mongolian Localization — owner: Batbayar"),
        ("Who is responsible for Mongolian localization?", "Mongolian Localization — owner"),
    ],
)
def test_a_field_asked_in_other_words_leads_with_its_value(
    example: IngestServer, question: str, lead: str
) -> None:
    first = lines(ask(example, question))[0]
    assert first.startswith(lead), (question, first)


def test_who_came_to_a_meeting_are_its_attendees(example: IngestServer) -> None:
    first = lines(ask(example, "Who came to the Globex pilot review?"))[0]
    assert first.startswith("2026-10-14 · Globex pilot review — attendees: "), first
    assert "Dana Whitfield" in first and "Alice Chen" in first


def test_what_came_out_of_a_meeting_is_its_decisions(example: IngestServer) -> None:
    answer = ask(example, "What came out of the pricing review?")
    first, *rest = lines(answer)
    assert first.startswith("2026-10-07 · Pricing review — Decisions: Usage-based pricing"), first
    assert any("$0.45 per tracked shipment" in line for line in rest)
    assert "vacation" not in answer.text and "Alice is out" not in answer.text


def test_how_much_we_charge_leads_with_the_price_and_no_label_is_an_author(
    example: IngestServer,
) -> None:
    answer = ask(example, "How much do we charge now?")
    first = lines(answer)[0]
    assert "$0.45" in first and "usage-based" in first.lower(), first
    assert "by Why" not in answer.text


def test_when_we_last_met_a_company_in_mongolian_is_the_meeting(example: IngestServer) -> None:
    first = lines(ask(example, "Globex-тэй хамгийн сүүлд хэзээ уулзсан бэ?"))[0]
    assert "2026-11-12" in first and "Globex integration review" in first, first


def test_and_what_was_decided_is_asked_of_the_meeting_the_answer_named(
    example: IngestServer,
) -> None:
    question = "When was the latest Globex meeting?"
    before = ask(example, question)
    history = [Turn("user", question), Turn("assistant", before.text)]
    answer = ask(example, "And what was decided?", history=history)
    assert "2026-12-01" in answer.text and "$0.40" in answer.text, answer.text
    assert "900" not in answer.text  # nothing of another customer's meeting


def test_another_customer_s_price_is_no_disagreement(example: IngestServer) -> None:
    question = "What is the price in the Globex contract?"
    before = ask(example, question)
    assert "$0.40" in lines(before)[0]
    history = [Turn("user", question), Turn("assistant", before.text)]
    answer = ask(example, "And Nomin Trade?", history=history)
    first = lines(answer)[0]
    assert "900" in first and "disagree" not in answer.text, answer.text
    assert "$49" not in first


def test_a_figure_not_in_the_memory_is_said_plainly_with_what_was_searched(
    example: IngestServer,
) -> None:
    first = lines(ask(example, "What is Alex Kim's salary?"))[0]
    assert first.startswith(NO_SENTENCE), first
    assert "Searched for: Alex Kim; salary." in first, first


def test_a_decision_a_newer_one_reversed_is_said_first_to_be_replaced(
    example: IngestServer,
) -> None:
    answer = ask(example, "We decided on per-seat pricing in July. Does that decision still hold?")
    first = lines(answer)[0].lower()
    assert "per-seat" in first or "per seat" in first, answer.text
    assert "usage-based" in first or "replaced" in first or "superseded" in first, answer.text


def test_a_question_in_one_note_s_own_words_is_answered_with_that_sentence(
    example: IngestServer,
) -> None:
    answer = ask(example, "Who approves pilots under $25k?")
    assert not answer.text.startswith(NO_SENTENCE), answer.text
    assert "Karen approves pilots under $25k herself" in lines(answer)[0], answer.text


@pytest.mark.parametrize(
    ("question", "day"),
    [
        # other words beside the window that no sentence holds ("hold", "tell the events")
        ("Which meeting did we hold on 2026-10-07?", "2026-10-07 · Pricing review"),
        ("2026-10-07-нд ямар уулзалт болсон бэ?", "2026-10-07 · Pricing review"),
        ("What happened the day before today?", "2026-11-19 · "),
        ("Өнгөрсөн долоо хоногийн үйл явдлыг хэлээч.", "2026-11-12 · "),
    ],
)
def test_a_window_with_words_that_say_no_topic_lists_what_is_in_it(
    example: IngestServer, question: str, day: str
) -> None:
    answer = ask(example, question)
    assert not answer.text.startswith(NO_SENTENCE), answer.text[:300]
    assert any(line.startswith(day) or day in line for line in lines(answer)), answer.text[:600]


def test_a_figure_no_sentence_gives_is_said_plainly(example: IngestServer) -> None:
    # the subject is found, and nothing on it gives an amount: no list of its pages
    answer = ask(example, "How much does Alex Kim make?")
    assert answer.text.startswith(NO_SENTENCE), answer.text[:300]
    assert "Searched for: Alex Kim" in answer.text


def test_a_name_written_in_the_other_script_with_another_vowel_is_the_page(
    example: IngestServer,
) -> None:
    first = lines(ask(example, "Элис Чен хамгийн сүүлд аль уулзалтад оролцсон бэ?"))[0]
    assert "2026-11-05" in first and "Product roadmap review" in first, first


def test_who_someone_is_asked_beside_another_part_is_their_profile(
    example: IngestServer,
) -> None:
    answer = ask(example, "Who's Alex Novak, and where does he work?")
    first = lines(answer)[0]
    assert first.startswith("Alex Novak — role: Procurement Manager"), first
    assert "Joanna Price" in first and "Initech" in answer.text, answer.text[:500]
