"""Documents (Word ``.docx``, PowerPoint ``.pptx``, web pages ``.html``, books ``.epub``)
converted to markdown by Microsoft's ``markitdown``, a ``.pdf``'s text read by
``pdfminer.six`` (the library markitdown reads PDFs with), an ``.xlsx``'s sheets by
``memserver.convert.spreadsheet``: one note per document (a long one is cut into parts
by ``memserver import folder``).

The note is dated and attributed by the document's own metadata: the core properties of
an Office file (``docProps/core.xml``: creator, created, title), a PDF's info dictionary
(``/Author``, ``/CreationDate``, ``/Title``), a page's ``<meta>`` tags (author, date,
``article:published_time``) and ``<title>``, a book's package document
(``dc:creator``, ``dc:date``, else ``dcterms:modified``, ``dc:title``). markitdown
converts from the bytes given: it runs no macros, opens no embedded object and fetches
nothing (a linked image stays a link). An encrypted or corrupt file is refused with the
reason.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from typing import Any

from memserver.convert.archive import open_zip
from memserver.convert.errors import ConversionError, library_step
from memserver.convert.note import Note, iso_day
from memserver.convert.spreadsheet import xlsx_markdown
from memserver.convert.text import title_from_name

OFFICE = ("docx", "pptx", "xlsx")
_PDF_DATE = re.compile(r"D:(\d{4})(\d{2})(\d{2})")
MAX_PDF_INFLATED = 256 * 1024 * 1024  # all of a PDF's compressed streams but images, unpacked
MAX_PDF_RATIO = 200


def convert_document(name: str, data: bytes, kind: str) -> list[Note]:
    """The note of one document of ``kind`` (its extension without the dot). A failure
    after the metadata was read carries the document's date."""
    meta: dict[str, str] = {}
    if kind in OFFICE:
        meta = _office_meta(data, name)
    elif kind == "pdf":
        meta = _pdf_meta(data, name)
    elif kind in ("html", "htm"):
        meta = _html_meta(data)
    elif kind == "epub":
        meta = _epub_meta(data, name)
    day = iso_day(name) or iso_day(meta.get("date", ""))
    try:
        body = _markdown(data, kind, name)
    except ConversionError as exc:
        raise exc.dated(day) from None
    if not body.strip():
        raise ConversionError(
            f"{name} holds no text (a scanned document or an empty file?)",
            "export it with its text (run OCR on a scan first)",
            day,
        )
    title = meta.get("title") or title_from_name(name, body)
    return [Note(title, body, day, meta.get("author") or None)]


def _markdown(data: bytes, kind: str, name: str) -> str:
    if kind == "pdf":
        with library_step(name, "pdfminer.six", "extracting the text of its pages"):
            return _pdf_text_of_pages(data)
    if kind == "xlsx":
        with library_step(name, "openpyxl", "reading the workbook's sheets"):
            return xlsx_markdown(data, name)
    if kind == "docx":
        return _docx_markdown(data, name)
    from markitdown import StreamInfo
    from markitdown.converters import EpubConverter, HtmlConverter, PptxConverter

    converters: dict[str, Any] = {
        "pptx": PptxConverter,
        "html": HtmlConverter,
        "epub": EpubConverter,
    }
    info = StreamInfo(extension=f".{kind}", filename=name, charset="utf-8")
    with library_step(name, "markitdown", f"converting the {kind.upper()} to markdown"):
        return str(converters[kind]().convert(io.BytesIO(data), info).markdown or "")


def _docx_markdown(data: bytes, name: str) -> str:
    """A Word document's markdown: ``mammoth`` reads the DOCX (its own XML reading, headings,
    lists, tables) into HTML, and markitdown's HTML converter writes the markdown.

    markitdown's own DOCX path first rewrites ``word/document.xml`` through BeautifulSoup's
    XML parser (to turn equations into LaTeX); with lxml 6.2 and beautifulsoup4 4.15 that
    round trip drops the namespace prefixes and mammoth then finds no body, so every
    document fails. Measured on files from python-docx and LibreOffice
    (``bench/bench_docx.py``), this path reads the same text, headings, lists and tables on
    every version; only equations are left as their text. Pictures become their alt text
    (no base64 data in a note).
    """
    import mammoth
    from markitdown.converters import HtmlConverter

    def picture(image: Any) -> dict[str, str]:
        return {"alt": str(image.alt_text or "")}

    with library_step(name, "mammoth", "reading the document's paragraphs into HTML"):
        stream = io.BytesIO(data)
        style_map = mammoth.read_embedded_style_map(stream) or ""
        stream.seek(0)
        html = mammoth.convert_to_html(
            stream,
            style_map="\n".join(part for part in (style_map, "u => u") if part),
            include_embedded_style_map=False,
            convert_image=mammoth.images.img_element(picture),
        ).value
    with library_step(name, "markitdown", "writing the document's HTML as markdown"):
        return str(HtmlConverter().convert_string(html).markdown or "")


def _pdf_text_of_pages(data: bytes) -> str:
    """A PDF's text by pdfminer.six, pages apart (a form feed between them, where a long
    document is cut). markitdown's own PDF path runs pdfplumber's table finder on every
    page: five times slower here (30 pages: 22.7 s against 4.2 s), the same text."""
    from pdfminer.high_level import extract_text

    return str(extract_text(io.BytesIO(data)))


def _office_meta(data: bytes, name: str) -> dict[str, str]:
    """creator, created (or modified) and title from ``docProps/core.xml``."""
    found = _xml_texts(open_zip(data, name), "docProps/core.xml")
    return {
        "author": found.get("creator", ""),
        "date": found.get("created", "") or found.get("modified", ""),
        "title": found.get("title", ""),
    }


def _epub_meta(data: bytes, name: str) -> dict[str, str]:
    """dc:creator, dc:date (else dcterms:modified) and dc:title of a book's package
    document, which ``META-INF/container.xml`` names."""
    from defusedxml import ElementTree

    archive = open_zip(data, name)
    try:
        container = ElementTree.fromstring(archive.read("META-INF/container.xml"))
        package = next(
            str(e.get("full-path")) for e in container.iter() if e.tag.endswith("rootfile")
        )
    except Exception:
        raise ConversionError(
            f"{name} is not an EPUB book (no META-INF/container.xml naming its package)",
            "the file is corrupt or not what its extension says; export the book again",
        ) from None
    found = _xml_texts(archive, package)
    return {
        "author": found.get("creator", ""),
        "date": found.get("date", "") or found.get("dcterms:modified", ""),
        "title": found.get("title", ""),
    }


def _xml_texts(archive: zipfile.ZipFile, member: str) -> dict[str, str]:
    """The first text of each element of an XML member, by its tag without namespace (a
    ``<meta property="P">`` by ``P``); empty when the member is missing or broken (only
    the metadata is lost). Read with ``defusedxml``: no entity is expanded."""
    from defusedxml import ElementTree

    try:
        root = ElementTree.fromstring(archive.read(member))
    except Exception:
        return {}
    found: dict[str, str] = {}
    for element in root.iter():
        tag = str(element.get("property") or element.tag.rsplit("}", 1)[-1])
        text = " ".join((element.text or "").split())
        if text:
            found.setdefault(tag, text)
    return found


def _pdf_meta(data: bytes, name: str) -> dict[str, str]:
    """``/Author``, ``/CreationDate`` and ``/Title``; an encrypted or corrupt PDF is refused."""
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFParser, PDFSyntaxError
    from pdfminer.psexceptions import PSException

    try:
        document = PDFDocument(PDFParser(io.BytesIO(data)))
    except (PDFPasswordIncorrect, PDFEncryptionError) as exc:
        raise ConversionError(
            f"{name} is an encrypted PDF ({type(exc).__name__})",
            "save it again without a password (e.g. qpdf --decrypt IN OUT)",
        ) from None
    except (PDFSyntaxError, PSException, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ConversionError(
            f"{name} is not a readable PDF ({type(exc).__name__}: {exc})"[:500],
            "the file is corrupt or truncated; export it again",
        ) from None
    _check_streams(document, name)
    if document.encryption is not None:
        raise ConversionError(
            f"{name} is an encrypted PDF", "save it again without encryption (qpdf --decrypt)"
        )
    info: dict[str, Any] = document.info[0] if document.info else {}
    out = {key: _pdf_text(info.get(key)) for key in ("Author", "CreationDate", "Title")}
    match = _PDF_DATE.search(out["CreationDate"])
    day = "-".join(match.groups()) if match else ""
    return {"author": out["Author"], "date": day, "title": out["Title"]}


def _pdf_text(value: Any) -> str:
    from pdfminer.pdftypes import resolve1

    value = resolve1(value)
    if isinstance(value, bytes):
        if value.startswith(b"\xfe\xff"):
            return value[2:].decode("utf-16-be", "replace").strip()
        return value.decode("latin-1").strip()
    return str(value).strip() if value is not None else ""


def _html_meta(data: bytes) -> dict[str, str]:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(data, "html.parser")
    found: dict[str, str] = {}
    for tag in soup.find_all("meta"):
        key = str(tag.get("name") or tag.get("property") or "").casefold()
        value = " ".join(str(tag.get("content") or "").split())
        if key in ("author", "date", "article:published_time", "dc.date", "dc.creator"):
            found.setdefault("author" if "author" in key or "creator" in key else "date", value)
    if soup.title and soup.title.string:
        found["title"] = " ".join(soup.title.string.split())
    day = iso_day(found.get("date", ""))
    found["date"] = day.isoformat() if isinstance(day, dt.date) else ""
    return found


def _check_streams(document: Any, name: str) -> None:
    """Refuse a PDF bomb before any page is read: a compressed stream that unpacks more
    than ``MAX_PDF_RATIO`` times its size (past 16 MiB), or streams that unpack past
    ``MAX_PDF_INFLATED`` in all (counted 1 MiB at a time, nothing kept). Images are
    left out: the text is read without unpacking them."""
    import zlib

    from pdfminer.pdftypes import LITERALS_FLATE_DECODE, PDFObjectNotFound, PDFStream
    from pdfminer.psparser import LIT

    total = 0
    for xref in document.xrefs:
        for objid in xref.get_objids():
            try:
                obj = document.getobj(objid)
            except (PDFObjectNotFound, ValueError, TypeError, KeyError):
                continue
            if not isinstance(obj, PDFStream) or obj.get("Subtype") is LIT("Image"):
                continue
            filters = obj.get_filters()
            if not filters or filters[0][0] not in LITERALS_FLATE_DECODE:
                continue
            data = obj.rawdata or b""
            limit = max(16 * 1024 * 1024, MAX_PDF_RATIO * len(data))
            inflater = zlib.decompressobj()
            unpacked = 0
            try:
                while data and unpacked <= limit and total + unpacked <= MAX_PDF_INFLATED:
                    unpacked += len(inflater.decompress(data, 1024 * 1024))
                    data = inflater.unconsumed_tail
            except zlib.error:
                continue  # a broken stream: the converter says so if it matters
            total += unpacked
            if unpacked > limit or total > MAX_PDF_INFLATED:
                raise ConversionError(
                    f"{name} has compressed streams that unpack to over {unpacked:,} bytes "
                    "(a PDF bomb?)",
                    "export the document again, or split it",
                )
