"""The answer a model writes from the agent's evidence: checked, and shown below the
evidence's own plain answer."""

from __future__ import annotations

from read_agent.extractive.reply import HEADER, NO_ANSWER, NO_SENTENCE
from read_agent.model.written_answer import EVIDENCE_HEADER, answers, check, compose
from read_agent.tools.citations import CitedPage

PAGE = "meetings/2026-11-12-globex-integration-review"
LEAD = f"Latest meeting: 2026-11-12 · Globex integration review [{PAGE}]"
EXTRACTIVE = "\n".join(
    [
        LEAD,
        HEADER,
        f"- 2026-11-12 · Globex accepted the webhook design. [{PAGE}]",
        f"- 2026-11-12 · The contract goes to Dana Whitfield by 2026-11-16. [{PAGE}]",
    ]
)
ALLOWED = {PAGE: CitedPage(PAGE, "Globex integration review", "2026-11-12")}


def test_the_evidence_lead_stays_first_and_the_models_answer_follows_it() -> None:
    # seen with a 1.5B model: its sentence led, and the latest meeting's title was
    # only in the evidence below it
    written = f"On 2026-11-12 Globex accepted the webhook design [{PAGE}]."
    shown = compose(written, EXTRACTIVE).splitlines()
    assert shown[:3] == [LEAD, written, ""]
    assert shown[3] == EVIDENCE_HEADER and shown[4].startswith("- 2026-11-12 · Globex accepted")
    assert HEADER not in shown
    # a model that repeats the lead is not shown twice
    assert compose(LEAD, EXTRACTIVE).splitlines()[:2] == [LEAD, ""]
    # without a plain lead the model's answer comes first
    bare = "\n".join(EXTRACTIVE.splitlines()[1:])
    assert compose(written, bare).splitlines()[:3] == [written, "", EVIDENCE_HEADER]


def test_a_written_answer_must_keep_the_leads_figures_and_state_only_evidence() -> None:
    lines = EXTRACTIVE.splitlines()[:1] + EXTRACTIVE.splitlines()[2:]
    ok = check(f"The latest meeting was on 2026-11-12 [{PAGE}].", lines, ALLOWED)
    assert ok.text is not None and ok.cited == (PAGE,)
    assert check(f"It was on 2026-11-05 [{PAGE}].", lines, ALLOWED).reason == (
        "model_answer_unsupported"
    )
    assert check(f"Dana gets it by 2026-11-16 [{PAGE}].", lines, ALLOWED).reason == (
        "model_answer_changed"
    )
    # no figure at all: the lead shown above it gives them
    assert check(f"Globex accepted the webhook design [{PAGE}].", lines, ALLOWED).text
    assert check("To answer this, I'll look at the meetings.", lines, ALLOWED).reason == (
        "model_answer_plan"
    )
    # seen with a 1.5B model, above evidence that answered: never shown
    for none in ("The knowledge base has no answer.", "The evidence does not mention it."):
        assert check(none, lines, ALLOWED).reason == "model_answer_none"
    asked = "Өнгөрсөн долоо хоногт юу болсон бэ?"  # "What happened last week?"
    echo = check("Өнгөрсөн долоо хоногт юу болсон бэ.", lines, ALLOWED, asked)
    assert echo.reason == "model_answer_echo"


def test_the_model_writes_only_from_evidence_that_answers() -> None:
    assert answers(EXTRACTIVE)
    for none in (NO_ANSWER, f"{NO_SENTENCE} The closest:\n{HEADER}\n- 2026-11-12 · x [{PAGE}]"):
        assert not answers(none)


def test_days_written_out_are_read_as_the_evidence_writes_them() -> None:
    """Asked for ISO dates, a 1.5B model writes "June 18, 2026": the same day is kept,
    another is not; "12 months" is the evidence's "12-month"."""
    intro = "meetings/2026-06-18-globex-intro-call"
    lines = [
        f"First meeting: 2026-06-18 · Globex intro call [{intro}]",
        f"- 2026-06-18 · Globex wants a 12-month pilot. [{intro}]",
    ]
    allowed = {intro: CitedPage(intro, "Globex intro call", "2026-06-18")}
    kept = check(
        f"The first meeting was on June 18, 2026, about 12 months [{intro}].", lines, allowed
    )
    assert kept.text is not None and kept.reason is None
    other = check(f"The first meeting was on 19th June 2026 [{intro}].", lines, allowed)
    assert other.reason == "model_answer_unsupported"
