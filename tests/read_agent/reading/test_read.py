"""A question read once, by meaning: the field or section of the subject's page it asks
about (by the schema's own words, the lexicon's meanings and the answer's type), which
way a link is read, its kinds, the day it asks the state at and the claim it asks the
evidence for; in English and Mongolian, the names in either script."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from memserver.kb.schema import load_schema
from read_agent.reading import BEFORE_CHANGE, Context, Kind, Subject, Wants, read, topical
from tests.fixtures.server import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB / "schema.yaml")
BOB = Subject("people/bob-martinez", "Bob Martinez", "people")
PRIYA = Subject("people/priya-shah", "Priya Shah", "people")
ALEX = Subject("people/alex-kim", "Alex Kim", "people")
LOCALIZATION = Subject("projects/mongolian-localization", "Mongolian Localization", "projects")
INITECH = Subject("companies/initech", "Initech", "companies")
GLOBEX = Subject("companies/globex", "Globex", "companies")
REVIEW = Subject("meetings/2026-10-14-globex-pilot-review", "Globex pilot review", "meetings")
NAMES = {
    BOB.id: ["Bob Martinez", "Bob", "Боб Мартинез"],
    ALEX.id: ["Alex Kim", "Алекс Ким"],
    LOCALIZATION.id: ["Mongolian Localization", "Монгол хэлний хувилбар"],
}


def asked(question: str, *subjects: Subject) -> tuple[str | None, bool]:
    reading = read(question, Context(schema=SCHEMA, subjects=subjects, names=NAMES))
    return (reading.field.name, reading.field.inward) if reading.field else (None, False)


@pytest.mark.parametrize(
    ("question", "subject", "field"),
    [
        ("Who is Bob Martinez's boss?", BOB, "reports_to"),
        ("Who does Bob report to?", BOB, "reports_to"),
        ("Who manages Priya Shah?", PRIYA, "reports_to"),
        ("Боб Мартинезийн дарга хэн бэ?", BOB, "reports_to"),
        ("What's Bob's job title now?", BOB, "role"),
        ("What is Bob Martinez's current position?", BOB, "role"),
        ("Who leads the Mongolian localization work?", LOCALIZATION, "owner"),
        ("Who is responsible for Mongolian localization?", LOCALIZATION, "owner"),
        ("Монгол хэлний хувилбарыг хэн хариуцдаг вэ?", LOCALIZATION, "owner"),
        ("When will the Mongolian localization be ready?", LOCALIZATION, "due_date"),
        ("Who came to the Globex pilot review?", REVIEW, "attendees"),
        ("What does Initech pay us annually?", INITECH, "contract_value"),
        ("How big is the Initech deal per year?", INITECH, "contract_value"),
        ("When did Globex become a customer?", GLOBEX, "status"),
    ],
)
def test_the_field_asked_is_read_by_meaning(question: str, subject: Subject, field: str) -> None:
    assert asked(question, subject) == (field, False)


def test_the_answer_s_type_alone_picks_the_one_field_that_can_hold_it() -> None:
    # "run" names no field of a company; "when" asks its one date field
    assert asked("Until when does Initech's contract run?", INITECH) == ("renewal_date", False)
    reading = read("Until when does Initech's contract run?", Context(SCHEMA, [INITECH]))
    assert reading.wants is Wants.WHEN and reading.field and reading.field.by == "type"
    # "how many" names what it counts: user accounts are no contract value, though that
    # is a company's one number field
    assert asked("How many user accounts does Initech have?", INITECH) == (None, False)


@pytest.mark.parametrize(
    "question",
    [
        "Who reports to Alex Kim?",
        "Who are Alex Kim's direct reports?",
        "Which people does Alex Kim manage?",
        "Алекс Кимд хэн тайлагнадаг вэ?",
    ],
)
def test_a_link_read_from_its_other_end_asks_the_pages_that_link_in(question: str) -> None:
    assert asked(question, ALEX) == ("reports_to", True)


def test_a_stop_word_names_no_field() -> None:
    # "for" is the verb of a project's customer; "deadline" means its due date
    question = "What is the deadline for the Mongolian localization?"
    assert asked(question, LOCALIZATION) == ("due_date", False)


def test_a_field_s_word_in_a_question_about_something_else_is_not_asked() -> None:
    assert asked("Which Globex customers asked for SMS notifications?", GLOBEX) == (None, False)
    assert asked("Globex's customers: when did they get the tracking link?", GLOBEX) == (
        None,
        False,
    )


def test_a_question_without_a_subject_or_beyond_it_asks_no_field() -> None:
    assert asked("Who is Bob Martinez's boss?") == (None, False)
    assert asked("Who is Bob?", BOB) == (None, False)  # who someone is: no field of theirs


def test_the_section_asked_is_read_by_meaning() -> None:
    for question in (
        "What came out of the Globex pilot review?",
        "Globex pilot review: юу шийдсэн бэ?",
    ):
        reading = read(question, Context(SCHEMA, [REVIEW]))
        assert reading.section == "Decisions", question


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("What did we decide in the pricing review?", {Kind.DECISION}),
        ("Does that decision still hold?", {Kind.DECISION, Kind.CHANGE}),
        ("Do the sources agree on Initech's contract value?", {Kind.AGREEMENT}),
        ("What supports the switch to usage-based pricing?", {Kind.EVIDENCE}),
        ("When did we first learn of the outage?", {Kind.LEARNED}),
        ("Номин Трейдийн үнийн талаар зөрүүтэй мэдээлэл байгаа юу?", {Kind.AGREEMENT}),
        ("When is the next Globex meeting?", set()),
    ],
)
def test_the_kinds_of_a_question(question: str, kinds: set[Kind]) -> None:
    assert read(question).kinds == kinds


def test_who_or_what_a_subject_is_is_asked_next_to_its_name() -> None:
    novak = Subject("people/alex-novak", "Alex Novak", "people")
    bataa = Subject("people/batbayar-dorj", "Batbayar Dorj", "people")
    for question, subject in [
        ("Who is Alex Novak?", novak),
        ("Who's Alex Novak, and where does he work?", novak),
        ("Батбаяр Дорж хэн бэ?", bataa),
    ]:
        reading = read(question, Context(SCHEMA, [subject]))
        assert Kind.PROFILE in reading.kinds, question
        assert reading.field is None, (question, reading.field)  # "who" is the subject
    # "who is" asks for someone else here: the account owner, a field of Globex
    reading = read("Who is the account owner at Globex?", Context(SCHEMA, [GLOBEX]))
    assert Kind.PROFILE not in reading.kinds
    assert reading.field is not None and reading.field.name == "account_owner"


def test_a_name_that_owns_what_follows_is_not_asked_who_it_is() -> None:
    dana = Subject("people/dana-whitfield", "Dana Whitfield", "people")
    for question, subject in [("Who is Globex's CEO?", GLOBEX), ("What is Dana's phone?", dana)]:
        reading = read(question, Context(SCHEMA, [subject], {dana.id: ["Dana Whitfield", "Dana"]}))
        assert Kind.PROFILE not in reading.kinds, question
        assert reading.terms, question  # the CEO, the phone: what is asked of it


def test_a_subject_said_only_inside_a_longer_name_is_not_asked_about() -> None:
    rollout = Subject("projects/globex-eta-rollout", "Globex ETA Rollout", "projects")
    names = {rollout.id: ["Globex ETA Rollout", "Globex rollout"], GLOBEX.id: ["Globex"]}
    reading = read(
        "Who is in charge of the Globex rollout?", Context(SCHEMA, [GLOBEX, rollout], names)
    )
    assert [s.id for s in reading.subjects] == [rollout.id]
    assert reading.field is not None and reading.field.name == "owner"
    # said on its own as well, it stays a subject
    both = read(
        "Does Globex know who runs the Globex rollout?", Context(SCHEMA, [GLOBEX, rollout], names)
    )
    assert {s.id for s in both.subjects} == {GLOBEX.id, rollout.id}


def test_a_claim_is_what_the_evidence_is_asked_for() -> None:
    assert read("What supports the switch to usage-based pricing?").claim == (
        "switch to usage-based pricing"
    )
    assert read("What is the evidence that Globex signed?").claim == "Globex signed"
    assert read("What did we decide about pricing?").claim is None


AUGUST = {"window": {"start": "2026-08-01T00:00:00+08:00", "end": "2026-09-01T00:00:00+08:00"}}


def test_the_day_a_question_asks_the_state_at() -> None:
    def as_of(question: str, time: dict[str, object] | None = None) -> str | None:
        return read(question, Context(time=AUGUST if time is None else time)).as_of

    assert as_of("What was our pricing in August?") == "2026-08-31"
    assert as_of("What did we think in August?") == "2026-08-31"
    assert as_of("үнэ 8-р сарын байдлаар") == "2026-08-31"
    assert as_of("What happened in August?") is None
    assert as_of("What would you have said if asked in August?") == "2026-08-31"
    assert as_of("What was the price before the change?", {}) == BEFORE_CHANGE
    assert as_of("Үнэ өмнө нь ямар байсан бэ?", {}) == BEFORE_CHANGE
    assert read("What did we think in August?", Context(time=AUGUST)).is_(Kind.AS_OF)


def test_a_change_since_what_held_on_one_date_asks_the_state_on_it() -> None:
    point = {**AUGUST, "point": True}
    since = "What pricing rules did we have in August, and what has changed since?"
    assert read(since, Context(time=point)).as_of == "2026-08-31"
    assert read("Which of August's prices are still current?", Context(time=point)).as_of
    # a span to or from a date is no date of a state; a decision's date is when it was made
    assert read(since, Context(time=AUGUST)).as_of is None
    decided = "We decided on per-seat pricing in August. Does that decision still hold?"
    assert read(decided, Context(time=point)).as_of is None


def test_the_topic_leaves_out_the_frame_names_and_the_answer_s_type() -> None:
    assert read("What went on yesterday?", Context(time={"phrase": "yesterday"})).terms == ()
    assert read(
        "Which meeting took place on October 7?", Context(time={"phrase": "on October 7"})
    ).terms == ("meeting",)
    reading = read("Who is Bob Martinez's boss?", Context(SCHEMA, [BOB], NAMES))
    assert "bob" not in reading.terms and "martinez" not in reading.terms
    assert topical("what was the price then?") == {"price"}
    assert topical("Is it still current or has it since been replaced?") == set()
    # "хугацаа" (period, time) frames a Mongolian "when": "the trial period, when did it
    # start?" is about the trial, not about a project's start and due dates
    trial = read("Номин Трейдийн туршилтын хугацаа хэзээ эхэлсэн бэ?", Context(SCHEMA))
    assert "хугацаа" not in trial.terms and "туршилтын" in trial.terms
    # the words of a question on the answer's form (direct or inferred) and of its frame
    # ("take me through ... for each") say no topic
    evidence = read(
        "Take me through the notes on the export bug, for each whether it is an inference"
    )
    assert evidence.terms == ("notes", "export", "bug"), evidence.terms


@pytest.mark.parametrize(
    "question",
    [
        "Who led the decision to pivot the architecture, and what options did they weigh?",
        "What did we decide about pricing?",
        "What did the retention policy replace, and what led to the change?",
        "What would you have answered on 2022-01-15?",
        "Walk me through the supporting records: direct testimony or inference?",
        "Do our notes agree on what Initech pays per year?",
        "Initech-ийн гэрээний дүн эх сурвалжуудад зөрүүтэй юу?",
        "Үнийн талаар ямар шийдвэр гаргасан бэ?",
        "Яагаад usage-based руу шилжсэн бэ?",
    ],
)
def test_a_company_memory_question_is_told_by_its_kinds(question: str) -> None:
    assert read(question).company, question


@pytest.mark.parametrize(
    "question",
    [
        "What price did we agree with Nomin Trade?",
        "Who attended the Initech meeting in October?",
        "Номин Трейдтэй ямар үнээр тохиролцсон бэ?",
        "When is the Globex renewal?",
    ],
)
def test_other_questions_are_not_company_memory_questions(question: str) -> None:
    assert not read(question).company, question


@pytest.mark.parametrize(
    ("question", "since"),
    [
        ("What did we believe about pricing on 2022-03-01, and what has changed since?", True),
        ("What was our retention policy as of March 2022, and is it still in effect?", True),
        ("What did you know about the outage on 2021-06-01? What became of it?", True),
        ("What's your current understanding, and what would you have said on 2022-01-15?", True),
        ("2022-05-31-ний байдлаар юу мэдэж байсан бэ? Түүнээс хойш юу өөрчлөгдсөн бэ?", True),
        ("2022 оны 5-р сарын байдлаар ямар бодлого байсан бэ, одоо ч хүчинтэй юу?", True),
        ("What was our pricing as of 2026-08-31?", False),
        ("What did we think about pricing in June?", False),
        ("2026 оны 8-р сарын байдлаар үнэ ямар байсан бэ?", False),
    ],
)
def test_a_past_day_with_the_time_since_is_told_from_a_plain_as_of_question(
    question: str, since: bool
) -> None:
    assert read(question).since_then is since, question


def test_first_learned_is_when_the_memory_learned_it_not_a_list_order() -> None:
    assert read("When did you first learn that, and when did the correction come?").is_(
        Kind.LEARNED
    )
    assert read("When did we first hear the conclusion?").is_(Kind.LEARNED)
    assert not read("What was the first decision about pricing?").is_(Kind.LEARNED)


def test_the_embedder_picks_the_field_the_words_leave_open() -> None:
    from memserver.clients.embed import make_embedder

    hashed = make_embedder("hash")

    def embed(query: str, passages: Sequence[str]) -> tuple[np.ndarray, Sequence[np.ndarray]]:
        return hashed.embed_query(query), hashed.embed_passages(passages)

    reading = read("What is Bob's e-mail address?", Context(SCHEMA, [BOB], NAMES, embed=embed))
    assert reading.field is not None and reading.field.name == "email"
    assert reading.field.by == "embedder"
    # without an embedder the words alone leave it open
    assert read("What is Bob's e-mail address?", Context(SCHEMA, [BOB], NAMES)).field is None


def test_the_embedder_picks_no_field_when_only_a_name_and_a_time_are_asked() -> None:
    # "what happened with Initech at the end of June?" asks its events then, no field
    asked_texts: list[str] = []

    def embed(question: str, texts: Sequence[str]) -> tuple[np.ndarray, Sequence[np.ndarray]]:
        asked_texts.append(question)
        vectors = [np.eye(len(texts))[i] for i in range(len(texts))]
        return vectors[0], vectors  # the first field would stand far above the rest

    time = {"phrase": "at the end of June 2026"}
    question = "What happened with Initech at the end of June 2026?"
    context = Context(schema=SCHEMA, subjects=[INITECH], names=NAMES, time=time, embed=embed)
    assert read(question, context).field is None and asked_texts == []
    # a topical word left: the embedder is asked, without the name or the time phrase
    question = "What is Initech's web address at the end of June 2026?"
    assert read(question, context).field is not None
    assert asked_texts and "june" not in asked_texts[-1] and "initech" not in asked_texts[-1]


def test_every_time_phrase_says_when_not_what() -> None:
    # the search reads one window; the question's other time phrase is time too, and
    # its dashed year is no identifier
    question = "What was Globex's contract worth in early 2026, and what is it worth by mid-2027?"
    reading = read(
        question,
        Context(time={"phrase": "in early 2026"}, intent={"identifiers": ["mid-2027"]}),
    )
    assert reading.terms == ("globex", "contract", "worth")
    assert reading.identifiers == ()
    # an identifier outside every time phrase stays one
    invoice = read(
        "Was INV-2026-044 paid in late October?", Context(intent={"identifiers": ["INV-2026-044"]})
    )
    assert invoice.identifiers == ("INV-2026-044",)
    assert "late" not in invoice.terms and "october" not in invoice.terms


def test_the_embedder_picks_no_field_of_a_question_about_more() -> None:
    # a field is a word or two; five topical words ask about something a sentence says
    def embed(question: str, texts: Sequence[str]) -> tuple[np.ndarray, Sequence[np.ndarray]]:
        vectors = [np.eye(len(texts))[i] for i in range(len(texts))]
        return vectors[0], vectors  # the first field would stand far above the rest

    context = Context(schema=SCHEMA, subjects=[INITECH], names=NAMES, embed=embed)
    assert read("What is Initech's web address?", context).field is not None
    asked = "What drop in support tickets did the Initech rollout achieve?"
    assert read(asked, context).field is None
