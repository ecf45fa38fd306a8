"""An extractive answer's lines are objects until they are shown: one renderer writes
them as text, the same objects go out as JSON, and a repeat is told by what the
objects say, not by the text cut back apart."""

from __future__ import annotations

from dataclasses import replace

from read_agent.extractive.line import CLOSEST, DIRECT, INFERRED, LATER, Line, Part
from read_agent.extractive.reply import HEADER, Reply, bare

QUOTE = Line(
    "Caroline: I went to the support group.",
    "2023-05-07",
    ("meetings/support",),
    DIRECT,
    "source/session-01.md",
    "Caroline",
    said="2023-05-08",
)


def test_a_line_renders_its_tag_date_words_label_and_citation_in_that_order() -> None:
    assert QUOTE.render() == (
        "- 2023-05-07 (said on 2023-05-08) · Caroline: I went to the support group. "
        "(direct: source/session-01.md, by Caroline) [meetings/support]"
    )
    later = Line("The review reversed it.", "2026-10-07", ("meetings/x",), tag=LATER)
    assert later.render() == "- Later: 2026-10-07 · The review reversed it. [meetings/x]"
    lead = Line(
        "Acme is priced per seat.", "2026-07-15", ("decisions/a",), INFERRED, tag="As of 2026-08-31"
    )
    assert lead.render(bullet=False) == (
        "As of 2026-08-31: 2026-07-15 · Acme is priced per seat. (inferred) [decisions/a]"
    )
    listed = Line(
        "Reports to Alex Kim: ", parts=(Part("Bob ", "people/bob"), Part(", Cy ", "people/cy"))
    )
    assert listed.render(bullet=False) == "Reports to Alex Kim: Bob [people/bob], Cy [people/cy]"


def test_a_line_as_json_keeps_each_field_apart() -> None:
    data = QUOTE.as_dict()
    assert data["date"] == "2023-05-07" and data["said_on"] == "2023-05-08"
    assert data["text"] == "Caroline: I went to the support group."
    assert (data["label"], data["source"], data["author"]) == (
        DIRECT,
        "source/session-01.md",
        "Caroline",
    )
    assert data["cited"] == ["meetings/support"] and data["tag"] is None
    # a raw note's own sentence is stated by the note it cites
    note = Line("We chose Stripe.", None, ("source/memo.md",), DIRECT)
    assert note.as_dict()["source"] == "source/memo.md"
    assert Line("x", None, ("p/a",), INFERRED).as_dict()["source"] is None


def test_the_same_sentence_on_two_pages_is_said_once_whatever_its_date() -> None:
    first = Line("Ship the beta on Friday.", "2026-11-12", ("meetings/a",), INFERRED)
    copied = Line("Ship the  beta on friday.", "2026-11-13", ("projects/b",), DIRECT)
    other = Line("The beta slipped.", "2026-11-20", ("meetings/c",), INFERRED)
    digest = Reply(None, [first, copied, other]).digest()
    assert digest.lines == (first, other)
    # a tag is part of what a line says: "Changed later" is not the same sentence
    changed = Line("Ship the beta on Friday.", "2026-11-12", ("meetings/a",), tag="Changed later")
    assert Reply(None, [first, changed]).digest().lines == (first, changed)
    # the lead said it already
    assert Reply(first, [copied, other]).digest().lines == (other,)


def test_a_line_telling_nothing_the_lines_above_did_not_is_left_out() -> None:
    pivot = ("decisions/pivot",)
    decided = Line("Pivot to API-first: accepted; decided by Maya Patel", "2021-04-15", pivot)
    restated = Line("Pivot to API-first — decided on: 2021-04-15", "2021-04-15", pivot)
    quoted = Line("Maya: we decided to pivot to API-first", "2021-04-15", ("source/m.md",))
    other_day = Line("Accepted: pivot to API-first", "2022-05-10", pivot)
    figure = Line("Pivot to API-first with the $2 M seed", "2021-04-15", ("source/m.md",))
    changed = Line("API-first pivot", "2021-04-15", pivot, tag="Changed later")
    lines = [decided, restated, quoted, other_day, figure, changed]
    # a new day, a new number and a tag tell something; the restatement and quote do not
    kept = (decided, other_day, figure, changed)
    assert Reply(None, lines).digest().lines == kept
    assert Reply(replace(decided, label=INFERRED), [restated, quoted]).digest().lines == ()


def test_a_line_quoting_a_shorter_one_takes_its_place() -> None:
    said = Line(
        "We settle on forty-nine dollars per user per month for Acme.", "2026-07-15", ("d/a",)
    )
    quoting = Line(f"Hi Maya, {said.text.lower()} Thanks!", "2026-07-16", ("source/m.md",))
    assert Reply(None, [said, quoting]).digest().lines == (quoting,)


def test_the_text_is_the_lead_the_header_the_lines_then_the_notes() -> None:
    lead = Line("Bob Martinez — role: VP", None, ("people/bob",))
    line = Line("Promoted to VP.", "2026-09-21", ("people/bob",), INFERRED)
    digest = Reply(lead, [line], window="2026-09-01 and 2026-09-30").digest(
        ["the search is slow", ""]
    )
    assert digest.text().splitlines() == [
        "Bob Martinez — role: VP [people/bob]",
        f"{HEADER} Dates: 2026-09-01 and 2026-09-30.",
        "- 2026-09-21 · Promoted to VP. (inferred) [people/bob]",
        "Note: the search is slow.",
    ]
    noted = digest.noted("read as “x” (from the previous answer).")
    assert noted.text().endswith("\nNote: read as “x” (from the previous answer).")
    assert (
        noted.as_dict()["lines"] == [line.as_dict()] and noted.as_dict()["lead"] == lead.as_dict()
    )
    # no answer: the sentence alone, no header
    assert bare("The knowledge base has no answer.").text() == "The knowledge base has no answer."


def test_the_closest_sentence_leads_as_the_line_quoting_it() -> None:
    said = Line("Ticket HZ-457: the scanner app froze at the Reno dock.", "2026-01-15", ("t/a",))
    record = Line(
        f"RECORD: support ticket. {said.text} Fixed the same day.", "2026-01-15", ("n/b",)
    )
    other = Line("The renewal is due on 2026-02-04 at the same price.", "2026-01-15", ("n/c",))
    closest = replace(said, tag=CLOSEST, label=INFERRED)
    digest = Reply(closest, [record, other]).digest()
    assert digest.lead == replace(record, tag=CLOSEST) and digest.lines == (other,)
    # a line the closest sentence holds is not said again
    held = Line("the scanner app froze at the Reno dock. Fixed the same day.", None, ("t/c",))
    whole = replace(record, tag=CLOSEST, label=INFERRED)
    assert Reply(whole, [held, other]).digest().lines == (other,)
    # a listing's first line names what it lists: its lines stay
    listed = Reply(Line(f"2 found: {said.text}; {other.text}"), [said, other]).digest()
    assert listed.lines == (said, other)


def test_a_raw_note_quoting_the_closest_sentence_does_not_lead() -> None:
    said = Line("Ticket HZ-457: the scanner app froze at the Reno dock.", "2026-01-15", ("t/a",))
    note = Line(f"Hi all, {said.text} Ignore the rest.", "2026-01-15", ("source/chat.md",))
    closest = replace(said, tag=CLOSEST, label=INFERRED)
    digest = Reply(closest, [note]).digest()
    # the page's closest sentence leads; the note's line, which holds it, is among the
    # lines, never the lead
    assert digest.lead == closest and digest.lines == (note,)
