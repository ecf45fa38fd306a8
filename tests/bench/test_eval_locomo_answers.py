"""The LoCoMo answer scorer reads an answer line's words as the read agent writes them."""

from __future__ import annotations

from bench.eval_locomo_answers import said, shows

TURN = "I went to the LGBTQ support group yesterday and it was so powerful."


def test_a_line_s_date_label_and_citation_are_not_its_words() -> None:
    direct = (
        f"- 2023-05-08 · Caroline: {TURN} (direct: source/session-01.md, by Caroline)"
        " [source/session-01.md]"
    )
    assert said(direct) == "i went to the lgbtq support group yesterday and it was so powerful"
    assert shows(direct, TURN)
    inferred = "- 2023-05-08 · Went to the LGBTQ support group yesterday (inferred) [people/c]"
    assert said(inferred).endswith("yesterday") and shows(inferred, TURN)


def test_a_line_of_other_words_does_not_show_the_turn() -> None:
    other = "- 2023-05-09 · Melanie painted a sunrise by the lake. (inferred) [people/melanie]"
    assert not shows(other, TURN)
