"""Converted text is cleaned in one place: broken lines joined, doubled spaces and slide
markup gone, tables kept; each note carries its genre in its frontmatter."""

from __future__ import annotations

from pathlib import Path

import pytest

from memserver.convert.clean import clean_text
from memserver.convert.isolated import convert_isolated
from memserver.kb.frontmatter import read_frontmatter
from tests.ingest_agent.real_files import (
    write_board_update,
    write_initech_mail,
    write_retro,
    write_sales_deck,
    write_slack,
)


def test_lines_broken_mid_sentence_are_joined_and_doubled_spaces_collapsed() -> None:
    text = (
        "Sofia Rossi has been promoted to Engineering Lead, effective\n"
        "2026-12-01.  She  now  reports  to  Maria  Lopez  and  leads  the\n"
        "backend team.\n\n"
        "A list:\n- one item that goes\n  on here\n- two"
    )
    assert clean_text(text) == (
        "Sofia Rossi has been promoted to Engineering Lead, effective 2026-12-01. She now "
        "reports to Maria Lopez and leads the backend team.\n\n"
        "A list:\n- one item that goes on here\n- two"
    )


def test_tables_code_and_quotes_are_kept_as_written() -> None:
    text = "| a  | b |\n|---|---|\n| 1  |  |\n\n```\nx  =  1\nnext\n```\n> quoted\n> reply"
    assert clean_text(text) == text


def test_a_line_that_ends_its_sentence_is_not_joined_and_short_lines_stay_apart() -> None:
    text = "Globex went live.\nNomin Trade signed.\nBest\nAlex Kim"
    assert clean_text(text) == text


def test_slide_markup_goes_and_slide_lines_are_points_under_their_slide() -> None:
    text = (
        "<!-- Slide number: 1 -->\n# Plan\nOffsite\n\n<!-- Slide number: 2 -->\n"
        "# Decisions (2026-11-26)\nTerritory: Bataa owns Mongolia.\nPricing: list stays."
    )
    assert clean_text(text, genre="slides") == (
        "## Plan\n- Offsite\n\n## Decisions (2026-11-26)\n"
        "- Territory: Bataa owns Mongolia.\n- Pricing: list stays."
    )


def test_plain_text_short_lines_alone_become_headings() -> None:
    text = "Board update\nTeam\nSofia Rossi is promoted to Engineering Lead.\n\nCustomers\nGlobex went live."
    assert clean_text(text, structured=False) == (
        "## Board update\n## Team\nSofia Rossi is promoted to Engineering Lead.\n\n"
        "## Customers\nGlobex went live."
    )


@pytest.mark.parametrize(
    ("write", "kind", "name", "genre", "people_key"),
    [
        (write_board_update, "pdf", "board-update.pdf", "document", None),
        (write_sales_deck, "pptx", "sales-plan-2027.pptx", "slides", None),
        (write_initech_mail, "eml", "initech-renewal.eml", "email", "participants"),
        (write_retro, "vtt", "2026-12-02-globex-go-live-retro.vtt", "transcript", "attendees"),
    ],
)
def test_each_format_converts_to_clean_text_with_its_genre(
    tmp_path: Path, write: object, kind: str, name: str, genre: str, people_key: str | None
) -> None:
    original = write(tmp_path / name)  # type: ignore[operator]
    [note] = convert_isolated(kind, name, original.read_bytes())
    text = note.render()
    front = read_frontmatter(text)
    assert front["genre"] == genre
    if people_key is not None:
        assert front[people_key] and {"attendees", "participants"} - {people_key} - set(front)
    assert "<!--" not in text and "  " not in text.replace("|  |", "")
    assert text.count(f"# {note.title}") == 1


def test_the_pdf_paragraph_reads_as_one_line(tmp_path: Path) -> None:
    pdf = write_board_update(tmp_path / "b.pdf")
    [note] = convert_isolated("pdf", "b.pdf", pdf.read_bytes())
    assert (
        "Sofia Rossi has been promoted to Engineering Lead, effective 2026-12-01. She now "
        "reports to Maria Lopez and leads the backend team of three engineers."
    ) in note.body.splitlines()
    assert "## Team" in note.body.splitlines()


def test_an_email_loses_its_signature_and_quoted_reply(tmp_path: Path) -> None:
    mail = write_initech_mail(tmp_path / "m.eml")
    [note] = convert_isolated("eml", "m.eml", mail.read_bytes())
    assert "the signed annual contract value is $108,000." in note.body
    assert "+1 303" not in note.body and "Head of Sales" not in note.body
    assert "forecast still shows" not in note.body


def test_a_transcript_title_keeps_the_hyphen_its_words_are_written_with(tmp_path: Path) -> None:
    vtt = write_retro(tmp_path / "2026-12-02-globex-go-live-retro.vtt")
    [note] = convert_isolated("vtt", vtt.name, vtt.read_bytes())
    assert note.title == "Globex go-live retro"


def test_a_slack_day_is_a_chat_of_participants(tmp_path: Path) -> None:
    archive = write_slack(tmp_path)
    [note] = convert_isolated("slack", archive.name, archive.read_bytes())
    front = read_frontmatter(note.render())
    assert front["genre"] == "chat" and front["participants"] == ["Batbayar Dorj", "Alex Kim"]
    assert "attendees" not in front
