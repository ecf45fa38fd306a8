from __future__ import annotations

from memserver.kb.words import STOPWORDS, mn_stems, normalize_name, words


def test_normalize_name_makes_spellings_of_one_name_equal() -> None:
    assert normalize_name("Bob Martinez") == normalize_name("bob-martinez") == "bob martinez"
    assert normalize_name("  BOB_martinez ") == "bob martinez"
    assert normalize_name("Өнөрбаяр Б.") == "өнөрбаяр б"
    assert normalize_name("ﬁnance") == "finance"


def test_words_are_the_normalised_name_split() -> None:
    assert words("Who is Bob-Martinez?") == ["who", "is", "bob", "martinez"]


def test_mongolian_stems_drop_one_ending_and_keep_three_letters() -> None:
    assert "уулзалт" in mn_stems("уулзалтын")
    assert mn_stems("Globex") == []
    assert mn_stems("ын") == []


def test_stop_words_hold_both_languages() -> None:
    assert {"the", "who", "хэн", "хэзээ"} <= STOPWORDS
