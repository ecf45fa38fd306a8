"""Spreadsheets (``.xlsx``) as markdown: a section per sheet, its rows a table.

Read by ``openpyxl`` read-only, with the values Excel saved for formulas (a formula is
never evaluated) and no external links followed. ``openpyxl`` is what markitdown's own
``[xlsx]`` path reads with, through pandas; reading it directly spares pandas (44 MB
installed) and writes an empty cell as nothing rather than "NaN". A sheet past
``MAX_CELLS`` cells in all (a sheet that claims a million rows) is refused, and so is
one whose table outgrows the conversion's text budget (counted row by row: 150,000
cells sharing one long string are stopped at the limit, not built first).
"""

from __future__ import annotations

import datetime as dt
import io

from memserver.convert import budget
from memserver.convert.errors import ConversionError

MAX_CELLS = 500_000


def xlsx_markdown(data: bytes, name: str) -> str:
    """Every sheet with a value in it, as ``## <sheet>`` and a table of its rows."""
    from openpyxl import load_workbook

    workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    sections: list[str] = []
    cells = 0
    spent = budget.current()
    try:
        for sheet in workbook.worksheets:
            rows: list[list[str]] = []
            for row in sheet.iter_rows(values_only=True):
                cells += len(row)
                if cells > MAX_CELLS:
                    raise ConversionError(
                        f"{name} holds over {MAX_CELLS:,} cells (a sheet sized to stall readers?)",
                        "save the sheets that matter as a smaller workbook, or as CSV",
                    )
                texts = [_cell(value) for value in row]
                if any(texts):
                    spent.spend(" | ".join(texts))  # the table's text, counted as it grows
                    rows.append(texts)
            if rows:
                sections.append(f"## {sheet.title}\n\n{_table(rows)}")
    finally:
        workbook.close()
    return "\n\n".join(sections)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        value = value.date()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(str(value).split()).replace("|", "\\|")


def _table(rows: list[list[str]]) -> str:
    """A markdown table of ``rows`` (the first one its header), as wide as its widest
    row with a value."""
    width = max(max((i + 1 for i, t in enumerate(row) if t), default=0) for row in rows)
    lines = ["| " + " | ".join((row + [""] * width)[:width]) + " |" for row in rows]
    lines.insert(1, "|" + "---|" * width)
    return "\n".join(lines)
