"""What opens a note's line is a speaker only when it reads as a name: a label ("Why:",
"For everyone:", "Root cause:") is nobody's words."""

from __future__ import annotations

from read_agent.reading.lexicon import is_label


def test_several_words_ending_in_lower_case_are_a_label() -> None:
    assert is_label("For everyone") and is_label("Root cause") and is_label("Next steps")
    assert is_label("Why") and is_label("Decision")


def test_names_are_speakers() -> None:
    assert not is_label("Maya Patel") and not is_label("Luis de la Cruz")
    assert not is_label("alex.kim") and not is_label("Энхтуяа Ганбаатар")
