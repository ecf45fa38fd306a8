"""Files built to exhaust the converter are refused by their limits, each with its reason:
PDF streams that unpack past their bound whatever their filters say (a chain, a stream
marked as an image, LZW), page trees too long, text counted as it is written (a workbook
of one shared string, an export of too many notes), pages nested too deep. A PDF whose
streams use those filters honestly still converts. (``bench.hostile_files`` runs them at
the issue's sizes and records time and memory.)"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import pytest

from memserver.convert import pdf
from memserver.convert.document import MAX_HTML_DEPTH, convert_document
from memserver.convert.errors import ConversionError
from memserver.convert.isolated import convert_isolated
from tests.fixtures import hostile_files as hostile

MIB = 1024 * 1024
CONTENT = b"BT /F1 12 Tf 72 720 Td (%s) Tj ET"


@pytest.mark.parametrize(
    ("make", "chain"),
    [
        (hostile.flate_bomb, "(FlateDecode)"),
        (hostile.hex_flate_bomb, "(ASCIIHexDecode, FlateDecode)"),
        (hostile.image_marked_bomb, "(FlateDecode)"),  # marked /Subtype /Image
        (hostile.lzw_bomb, "(LZWDecode)"),
    ],
)
def test_a_pdf_stream_that_unpacks_past_its_bound_is_a_bomb_whatever_its_filters(
    make: Callable[[int], bytes], chain: str
) -> None:
    data = make(64 * MIB)
    with pytest.raises(ConversionError) as refused:
        convert_isolated("pdf", "bomb.pdf", data, dropped=True)
    assert f"has a compressed stream {chain} that unpacks to over" in refused.value.message
    assert "a PDF bomb?" in refused.value.message


def test_honest_filters_and_chains_still_read() -> None:
    lzw = hostile.text_pdf("Hello LZW", b"/LZWDecode", hostile.lzw_encode(CONTENT % b"Hello LZW"))
    chained = hostile.text_pdf(
        "Hello chain",
        b"[/ASCIIHexDecode /FlateDecode]",
        zlib.compress(CONTENT % b"Hello chain").hex().encode() + b">",
    )
    assert "Hello LZW" in convert_isolated("pdf", "lzw.pdf", lzw)[0].body
    assert "Hello chain" in convert_isolated("pdf", "chain.pdf", chained)[0].body


def test_a_page_tree_too_long_is_refused_before_a_page_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConversionError, match="holds 200,000 pages, over the limit of 5,000"):
        convert_isolated("pdf", "long.pdf", hostile.pdf_of_pages(3, claimed=200_000))
    # a tree that claims few but holds more is stopped at the limit as it is read
    monkeypatch.setattr(pdf, "MAX_PAGES", 5)
    with pytest.raises(ConversionError, match="holds over 5 pages"):
        convert_document("liar.pdf", hostile.pdf_of_pages(8, claimed=2), "pdf")
    assert (
        "Page of a long report"
        in convert_document("ok.pdf", hostile.pdf_of_pages(5), "pdf")[0].body
    )


def test_text_is_counted_as_it_is_written_and_stops_at_the_limit() -> None:
    """A small workbook of one shared string in 20,000 cells is 40 MB of table: the
    conversion stops at the source size limit, with the reason and the command."""
    data = hostile.shared_string_xlsx(20_000)
    assert len(data) < 200_000
    with pytest.raises(ConversionError) as refused:
        convert_isolated("xlsx", "shared.xlsx", data, max_text=2 * MIB, dropped=True)
    assert "larger than the limit of 2,097,152 bytes" in refused.value.message
    assert "stopped there" in refused.value.message
    assert "memserver import folder DIR" in refused.value.fix


def test_an_export_of_many_notes_dropped_in_stops_at_the_note_limit() -> None:
    data = hostile.slack_days(150)
    with pytest.raises(ConversionError, match="holds more than 100 notes"):
        convert_isolated("slack", "export.zip", data, max_notes=100, dropped=True)
    assert len(convert_isolated("slack", "export.zip", data)) == 150  # imported: all


def test_pages_nested_too_deep_are_refused_before_they_are_parsed() -> None:
    with pytest.raises(ConversionError, match=f"more than {MAX_HTML_DEPTH} deep"):
        convert_isolated("html", "deep.html", hostile.nested_html(200_000))
    deep_enough = hostile.nested_html(MAX_HTML_DEPTH - 10)
    assert "deep text" in convert_isolated("html", "fine.html", deep_enough)[0].body
