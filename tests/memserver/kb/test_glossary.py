"""The business words the keyword arms and the read agent carry across the languages."""

from __future__ import annotations

from memserver.kb.glossary import other_language, same_meaning


def test_a_word_and_its_inflections_pair_with_the_other_language() -> None:
    assert same_meaning("үнийн", "pricing") and same_meaning("price", "үнээр")
    assert "үнэ" in other_language("prices") and "price" in other_language("үнийн")
    # who owns or answers for something: "хариуцдаг" (is responsible for) is "owner"
    assert same_meaning("хариуцдаг", "owner") and same_meaning("owned", "хариуцна")
    assert "хариуц" in other_language("responsible")


def test_words_of_one_script_or_of_no_line_are_not_paired() -> None:
    assert not same_meaning("price", "pricing")  # one script: same_word's business
    assert not same_meaning("globex", "үнэ") and other_language("globex") == ()


def test_the_words_of_a_job_title_pair_with_the_other_language() -> None:
    # "Who is the logistics director at Nomin Trade?" about "логистикийн захирал"
    assert same_meaning("director", "захирал") and same_meaning("logistics", "логистикийн")
    assert same_meaning("manager", "менежер") and same_meaning("executive", "гүйцэтгэх")
    assert "дарга" in other_language("boss") and "procurement" in other_language("худалдан")


def test_an_invoice_and_sending_it_pair_in_every_form() -> None:
    # "нэхэмжлэлийг хэн илгээх вэ?": who sends the invoice ("нэхэмжлэх", "нэхэмжлэл")
    assert same_meaning("нэхэмжлэлийг", "invoice") and same_meaning("invoices", "нэхэмжлэх")
    assert same_meaning("илгээх", "send") and same_meaning("sending", "илгээсэн")
    assert "send" in other_language("илгээв") and "нэхэмжл" in other_language("invoice")
