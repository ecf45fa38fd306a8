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
reason; so is a page (or a book's chapter) nested deeper than ``MAX_HTML_DEPTH``, before
it is parsed. A PDF's limits are in ``memserver.convert.pdf``.
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
from memserver.convert.pdf import pdf_meta, pdf_text
from memserver.convert.spreadsheet import xlsx_markdown
from memserver.convert.text import title_from_name

OFFICE = ("docx", "pptx", "xlsx")
MAX_HTML_DEPTH = 256  # elements open at once; deeper is refused before it is parsed
# A tag as an HTML parser would open or close it (its name), and the elements that never
# hold others (no end tag).
_TAG = re.compile(rb"<!--|<(/?)([a-z][a-z0-9-]*)")  # searched in the lower-cased page
_VOID = frozenset(b"area base br col embed hr img input link meta param source track wbr".split())
_RAW = frozenset((b"script", b"style", b"textarea", b"title"))  # text, not markup, inside


def convert_document(name: str, data: bytes, kind: str) -> list[Note]:
    """The note of one document of ``kind`` (its extension without the dot). A failure
    after the metadata was read carries the document's date."""
    meta: dict[str, str] = {}
    if kind == "html":  # before anything parses it
        check_html_depth(data, name)
    elif kind == "epub":
        archive = open_zip(data, name)
        for member in archive.namelist():
            if member.lower().endswith((".html", ".xhtml", ".htm")):
                check_html_depth(archive.read(member), f"{name}: {member}")
    if kind in OFFICE:
        meta = _office_meta(data, name)
    elif kind == "pdf":
        meta = pdf_meta(data, name)
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
            return pdf_text(data, name)
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


def check_html_depth(data: bytes, name: str) -> None:
    """Refuse a page whose elements nest deeper than ``MAX_HTML_DEPTH``, from one pass over
    its tags (open minus closed, as the parser would build them; comments, scripts and
    styles skipped): 10 MB of nested ``<div>`` took 21 s and 1.4 GiB of the parser
    before failing."""
    low = data.lower()
    depth = at = 0
    while (match := _TAG.search(low, at)) is not None:
        at = match.end()
        if match.group(0) == b"<!--":
            at = _after(low, b"-->", at)
            continue
        tag = match.group(2)
        if match.group(1):
            depth = max(0, depth - 1)
        elif tag in _RAW:  # its text is no markup
            at = _after(low, b"</" + tag, at)
        elif tag not in _VOID:
            depth += 1
            if depth > MAX_HTML_DEPTH:
                raise ConversionError(
                    f"{name} nests its elements more than {MAX_HTML_DEPTH} deep, over the "
                    "limit (a page built to stall parsers?)",
                    "save the page again from a browser, or as text (.md, .txt)",
                )


def _after(data: bytes, end: bytes, at: int) -> int:
    found = data.find(end, at)
    return len(data) if found < 0 else found + len(end)
