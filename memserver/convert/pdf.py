"""A PDF's text and info, read by ``pdfminer.six`` within limits a hostile file cannot pass.

- **Every decoded stream is bounded** (:func:`bounded_streams`): pdfminer decodes a stream
  (page contents, object streams, cross-reference streams, fonts' maps) in one place,
  ``PDFStream.decode``. While a PDF is read, that place first decodes the stream's whole
  filter chain here, stage by stage with an output limit (Flate, LZW and RunLength
  counted as they unpack, the ASCII filters and predictors never grow; CCITT fax checked
  by the size its parameters allow): past ``max(MIN_STREAM_BYTES, MAX_RATIO x packed)``
  for one stream, or ``MAX_INFLATED`` for all, the PDF is refused as a bomb. A chain, a
  stream marked as an image, a filter other than Flate: all take the same way. Image
  codecs (DCT, JPX, JBIG2) are never decoded, by pdfminer or here.
- **Pages are counted before they are read**: a page tree that says it holds more than
  ``MAX_PAGES`` is refused at once, and reading stops there whatever it says.
- **The text is counted as it is written** (``memserver.convert.budget``): a document
  stops at the conversion's text limit instead of being read to its end first.
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memserver.convert import budget
from memserver.convert.errors import ConversionError

MAX_PAGES = 5_000
MAX_RATIO = 200
MIN_STREAM_BYTES = 16 * 1024 * 1024
MAX_INFLATED = 256 * 1024 * 1024  # all of a PDF's decoded streams together
_CHUNK = 1024 * 1024
_PDF_DATE = re.compile(r"D:(\d{4})(\d{2})(\d{2})")


def pdf_text(data: bytes, name: str) -> str:
    """The text of every page (a form feed between pages), within the limits above."""
    from pdfminer.converter import TextConverter
    from pdfminer.layout import LAParams
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    spent = budget.current()

    class Counted(io.StringIO):
        def write(self, text: str) -> int:
            spent.spend(text)
            return super().write(text)

    with bounded_streams(name), Counted() as out:
        manager = PDFResourceManager(caching=True)
        device = TextConverter(manager, out, codec="utf-8", laparams=LAParams())
        interpreter = PDFPageInterpreter(manager, device)
        for number, page in enumerate(
            PDFPage.get_pages(io.BytesIO(data), maxpages=MAX_PAGES + 1), 1
        ):
            if number > MAX_PAGES:
                raise _too_many_pages(name, f"over {MAX_PAGES:,}")
            interpreter.process_page(page)
        return out.getvalue()


def pdf_meta(data: bytes, name: str) -> dict[str, str]:
    """``/Author``, ``/CreationDate`` and ``/Title``; an encrypted or corrupt PDF, or one
    whose page tree claims more than ``MAX_PAGES`` pages, is refused."""
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFParser, PDFSyntaxError
    from pdfminer.psexceptions import PSException

    with bounded_streams(name):  # the cross-reference streams are decoded here
        try:
            document = PDFDocument(PDFParser(io.BytesIO(data)))
        except (PDFPasswordIncorrect, PDFEncryptionError) as exc:
            raise ConversionError(
                f"{name} is an encrypted PDF ({type(exc).__name__})",
                "save it again without a password (e.g. qpdf --decrypt IN OUT)",
            ) from None
        except (
            PDFSyntaxError,
            PSException,
            ValueError,
            TypeError,
            KeyError,
            AttributeError,
        ) as exc:
            raise ConversionError(
                f"{name} is not a readable PDF ({type(exc).__name__}: {exc})"[:500],
                "the file is corrupt or truncated; export it again",
            ) from None
        if document.encryption is not None:
            raise ConversionError(
                f"{name} is an encrypted PDF", "save it again without encryption (qpdf --decrypt)"
            )
        pages = _page_count(document)
        if pages is not None and pages > MAX_PAGES:
            raise _too_many_pages(name, f"{pages:,}")
        info: dict[str, Any] = document.info[0] if document.info else {}
        out = {key: _text(info.get(key)) for key in ("Author", "CreationDate", "Title")}
    match = _PDF_DATE.search(out["CreationDate"])
    day = "-".join(match.groups()) if match else ""
    return {"author": out["Author"], "date": day, "title": out["Title"]}


def _too_many_pages(name: str, count: str) -> ConversionError:
    return ConversionError(
        f"{name} holds {count} pages, over the limit of {MAX_PAGES:,}",
        "split the document into parts (e.g. qpdf --split-pages=1000 IN OUT) and drop "
        "those in, or import the parts that matter",
    )


def _page_count(document: Any) -> int | None:
    from pdfminer.pdftypes import resolve1

    try:
        pages = resolve1(document.catalog.get("Pages"))
        count = resolve1(pages.get("Count")) if isinstance(pages, dict) else None
    except Exception:  # a broken page tree: the reading says what is wrong
        return None
    return count if isinstance(count, int) else None


def _text(value: Any) -> str:
    from pdfminer.pdftypes import resolve1

    value = resolve1(value)
    if isinstance(value, bytes):
        if value.startswith(b"\xfe\xff"):
            return value[2:].decode("utf-16-be", "replace").strip()
        return value.decode("latin-1").strip()
    return str(value).strip() if value is not None else ""


# -- decoded streams -------------------------------------------------------------------


@contextmanager
def bounded_streams(name: str) -> Iterator[None]:
    """While inside, every stream pdfminer decodes is decoded here first within the
    limits (see the module docstring); ConversionError when one is over them."""
    from pdfminer import pdftypes

    original = pdftypes.PDFStream.decode
    if getattr(original, "bounded", False):  # already inside (pdf_meta, then pdf_text)
        yield
        return
    streams = Streams(name)

    def decode(stream: Any) -> None:
        streams.decode(stream)
        original(stream)

    decode.bounded = True  # type: ignore[attr-defined]
    pdftypes.PDFStream.decode = decode  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        pdftypes.PDFStream.decode = original  # type: ignore[method-assign]


class Streams:
    """The decoded bytes of one PDF's streams, counted against the limits."""

    def __init__(self, name: str, total: int = MAX_INFLATED) -> None:
        self.name = name
        self.left = total
        self.chain = ""
        self.limit = 0

    def decode(self, stream: Any) -> int:
        """Decode ``stream``'s filter chain within the limits (nothing is kept); returns
        how many bytes it decodes to. ConversionError past a limit."""
        from pdfminer.pdftypes import (
            LITERALS_ASCII85_DECODE,
            LITERALS_ASCIIHEX_DECODE,
            LITERALS_CCITTFAX_DECODE,
            LITERALS_FLATE_DECODE,
            LITERALS_LZW_DECODE,
            LITERALS_RUNLENGTH_DECODE,
        )

        filters = stream.get_filters()
        self.chain = ", ".join(getattr(f, "name", str(f)) for f, _ in filters) or "none"
        data: bytes = stream.rawdata or b""
        self.limit = min(max(MIN_STREAM_BYTES, MAX_RATIO * len(data)), self.left)
        if stream.decipher and stream.objid is not None:
            data = stream.decipher(stream.objid, stream.genno, data, stream.attrs)
        for f, params in filters:
            if f in LITERALS_FLATE_DECODE:
                data = self._inflate(data)
            elif f in LITERALS_LZW_DECODE:
                data = self._unlzw(data)
            elif f in LITERALS_RUNLENGTH_DECODE:
                data = self._unrun(data)
            elif f in LITERALS_ASCII85_DECODE:
                from pdfminer.ascii85 import ascii85decode

                data = ascii85decode(data)
            elif f in LITERALS_ASCIIHEX_DECODE:
                from pdfminer.ascii85 import asciihexdecode

                data = asciihexdecode(data)
            elif f in LITERALS_CCITTFAX_DECODE:
                self._check(_fax_size(params, len(data)))
                break  # decoded by pdfminer alone, within the size just checked
            else:
                break  # image codecs are not decoded; pdfminer refuses unknown filters
            self._check(len(data))
        self.left -= len(data)
        return len(data)

    def _check(self, size: int) -> None:
        if size > self.limit:
            raise ConversionError(
                f"{self.name} has a compressed stream ({self.chain}) that unpacks to over "
                f"{self.limit:,} bytes, over the limit (a PDF bomb?)",
                "export the document again, or split it",
            )

    def _inflate(self, data: bytes) -> bytes:
        inflater = zlib.decompressobj()
        out: list[bytes] = []
        size = 0
        try:
            while data:
                piece = inflater.decompress(data, _CHUNK)
                size += len(piece)
                self._check(size)
                out.append(piece)
                data = inflater.unconsumed_tail
                if not piece and not data:
                    break
        except zlib.error:
            pass  # a broken stream: pdfminer keeps what can be read, and so is it counted
        return b"".join(out)

    def _unlzw(self, data: bytes) -> bytes:
        from pdfminer.lzw import LZWDecoder

        out: list[bytes] = []
        size = 0
        for piece in LZWDecoder(io.BytesIO(data)).run():
            size += len(piece)
            self._check(size)
            out.append(piece)
        return b"".join(out)

    def _unrun(self, data: bytes) -> bytes:
        """RunLengthDecode (PDF 1.7, 7.4.5), counted as it unpacks."""
        out = bytearray()
        at = 0
        while at < len(data):
            length = data[at]
            if length == 128:
                break
            if length < 128:
                out += data[at + 1 : at + 2 + length]
                at += 2 + length
            else:
                out += data[at + 1 : at + 2] * (257 - length)
                at += 2
            self._check(len(out))
        return bytes(out)


def _fax_size(params: Any, packed: int) -> int:
    """The most bytes a CCITT fax stream of these parameters can decode to (a row of
    ``Columns`` bits for every bit of input when ``Rows`` is not given)."""
    from pdfminer.pdftypes import resolve1

    params = resolve1(params) if params is not None else {}
    columns = resolve1(params.get("Columns", 1728)) if isinstance(params, dict) else 1728
    rows = resolve1(params.get("Rows", 0)) if isinstance(params, dict) else 0
    columns = columns if isinstance(columns, int) and columns > 0 else 1728
    rows = rows if isinstance(rows, int) and rows > 0 else packed * 8
    return (columns + 7) // 8 * rows
