"""Five originals that change or add facts about example_kb's people and customers, made by
the real tools (fpdf2, python-pptx, the standard library's ``email``, a WebVTT file as
meeting tools write it, a Slack export), for the tests that drop them into a copy of the
example and check what the memory then believes (``test_real_files.py``).

- ``board-update.pdf`` (2026-12-01, Maria Lopez): Sofia Rossi is promoted to Engineering
  Lead and now reports to Maria Lopez; Nadia Petrova joins as a Backend Engineer
  reporting to Sofia Rossi. Justified paragraphs, so the text comes out with lines broken
  mid-sentence and doubled spaces.
- ``sales-plan-2027.pptx`` (2026-11-26, Alex Kim): decisions on a slide under a dated
  heading, the 2027 list price, and a table of customers' contract prices.
- ``initech-renewal.eml`` (2026-12-03, Alex Kim): Initech signed the renewal at $108,000 a
  year; a signature and a quoted reply below the message.
- ``2026-12-02-globex-go-live-retro.vtt``: four speakers; Marcus Hale is Globex's new COO.
- a Slack export, ``#deals`` on 2026-12-04: Nomin Trade's launch discount agreed the day
  before, for the contract that started 2026-12-01.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.memserver.convert.originals import message, slack_export_of, write_eml, zip_folder

NOW = dt.datetime.fromisoformat("2026-12-05T12:00:00+08:00")

BOARD_UPDATE = (
    ("Team", (
        "Sofia Rossi has been promoted to Engineering Lead, effective 2026-12-01. She now "
        "reports to Maria Lopez and leads the backend team of three engineers.",
        "Nadia Petrova joined Acme Logistics as a Backend Engineer on 2026-11-30. She "
        "reports to Sofia Rossi and works on the usage metering pipeline first.",
    )),
    ("Customers", (
        "Globex went live in all eight warehouses on 2026-12-01, on schedule, after the "
        "integration review of November.",
        "Nomin Trade started its twelve-month contract on 2026-12-01 with thirty-five "
        "trucks on the app.",
    )),
)  # fmt: skip


def write_board_update(path: Path) -> Path:
    """The PDF: justified paragraphs fpdf2 wraps mid-sentence, spaces stretched."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_author("Maria Lopez")
    pdf.set_title("Board update, December 2026")
    pdf.set_creation_date(dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC))
    pdf.add_page()
    pdf.set_font("helvetica", style="B", size=16)
    pdf.cell(text="Board update, December 2026", new_x="LMARGIN", new_y="NEXT")
    for heading, paragraphs in BOARD_UPDATE:
        pdf.set_font("helvetica", style="B", size=13)
        pdf.cell(text=heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", size=11)
        for paragraph in paragraphs:
            pdf.multi_cell(w=110, text=paragraph, align="J", new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(path))
    return path


def write_sales_deck(path: Path) -> Path:
    """The deck: a title slide, a slide of decisions under a dated heading, a table."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    deck.core_properties.author = "Alex Kim"
    deck.core_properties.title = "Sales plan 2027"
    deck.core_properties.created = dt.datetime(2026, 11, 26, 15, 0)
    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = "Sales plan 2027"
    first.placeholders[1].text = "Sales team offsite, 2026-11-26"
    second = deck.slides.add_slide(deck.slide_layouts[1])
    second.shapes.title.text = "Decisions (2026-11-26)"
    body = second.placeholders[1].text_frame
    body.text = "Territory: Batbayar Dorj owns every account in Mongolia from 2027-01-01."
    for line in (
        "Pricing: the 2027 list price stays at $0.45 per tracked shipment.",
        "Decided by Alex Kim and Maria Lopez.",
    ):
        body.add_paragraph().text = line
    third = deck.slides.add_slide(deck.slide_layouts[5])
    third.shapes.title.text = "Customer contract prices"
    rows = (
        ("Customer", "Contract price", "Account owner"),
        ("Globex", "$0.40 per tracked shipment", "Alex Kim"),
        ("Nomin Trade", "900₮ per delivery", "Batbayar Dorj"),
    )
    table = third.shapes.add_table(3, 3, Inches(0.5), Inches(1.5), Inches(9), Inches(1.5)).table
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    deck.save(str(path))
    return path


def write_initech_mail(path: Path) -> Path:
    """The e-mail: the renewal signed, a signature, a quoted earlier message."""
    body = (
        "Hi Maria,\n\n"
        "Initech signed the renewal this morning. Joanna Price countersigned the order\n"
        "form for a two-year term, and the signed annual contract value is $108,000.\n"
        "ETA tracking for their outbound fleet will be quoted separately in Q1 2027.\n\n"
        "Best,\n"
        "Alex Kim\n"
        "Head of Sales, Acme Logistics\n"
        "+1 303 555 0142\n\n"
        "On Tue, 1 Dec 2026, Maria Lopez wrote:\n"
        "> Any news from Initech? The forecast still shows $96,000.\n"
    )
    msg = message(
        "Initech renewal signed",
        "Alex Kim <alex.kim@acmelogistics.io>",
        "Maria Lopez <maria@acmelogistics.io>",
        dt.datetime(2026, 12, 3, 2, 30, tzinfo=dt.UTC),
        body,
        "<initech-renewal-1@acmelogistics.io>",
    )
    return write_eml(path, msg)


RETRO_VTT = """WEBVTT

00:00:01.000 --> 00:00:06.000
<v Bob Martinez>Welcome to the go-live retro. First news: Marcus Hale is Globex's new COO, he joined us last week.</v>

00:00:06.500 --> 00:00:10.000
<v Marcus Hale>Thanks Bob. All eight warehouses went live on December 1 without a single stop.</v>

00:00:10.500 --> 00:00:15.000
<v Priya Shah>Tracking links went out for 4,100 shipments on the first day, and ETA accuracy was 93%.</v>

00:00:15.500 --> 00:00:20.000
<v Alex Kim>The first monthly invoice under the new contract goes out on 2027-01-05.</v>
"""


def write_retro(path: Path) -> Path:
    path.write_text(RETRO_VTT, encoding="utf-8")
    return path


def write_slack(root: Path) -> Path:
    """A Slack export zipped: #deals on 2026-12-04 (Ulaanbaatar morning)."""
    said = dt.datetime(2026, 12, 4, 2, 15, tzinfo=dt.UTC)
    export = slack_export_of(
        root / "acme-deals",
        {"U3": "Batbayar Dorj", "U4": "Alex Kim"},
        "deals",
        [
            ("U3", said, "Nomin Trade launch pricing: we agreed to an 850₮ discount yesterday "
             "for the first three months of the contract that started 2026-12-01."),
            ("U4", said + dt.timedelta(minutes=12), "Good call, Bataa. Send Энхтуяа the "
             "updated order form today."),
        ],
    )  # fmt: skip
    return zip_folder(export, root / "acme-deals.zip")


def drop_all(source: Path, scratch: Path) -> dict[str, str]:
    """Write the five originals under ``source`` (a knowledge base's ``source/``);
    returns path under source -> what it is."""
    (source / "docs").mkdir(parents=True, exist_ok=True)
    (source / "mail").mkdir(parents=True, exist_ok=True)
    (source / "meetings").mkdir(parents=True, exist_ok=True)
    (source / "slack").mkdir(parents=True, exist_ok=True)
    write_board_update(source / "docs/board-update.pdf")
    write_sales_deck(source / "docs/sales-plan-2027.pptx")
    write_initech_mail(source / "mail/initech-renewal.eml")
    write_retro(source / "meetings/2026-12-02-globex-go-live-retro.vtt")
    archive = write_slack(scratch)
    target = source / "slack" / archive.name
    target.write_bytes(archive.read_bytes())
    return {
        "docs/board-update.pdf": "pdf",
        "docs/sales-plan-2027.pptx": "pptx",
        "mail/initech-renewal.eml": "eml",
        "meetings/2026-12-02-globex-go-live-retro.vtt": "vtt",
        "slack/acme-deals.zip": "slack",
    }
