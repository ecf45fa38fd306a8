"""docs/sources.md lists every format a converter reads."""

from __future__ import annotations

from pathlib import Path

from memserver.convert.formats import FORMATS

SOURCES = Path(__file__).resolve().parents[3] / "docs" / "sources.md"


def test_the_sources_page_lists_every_converted_format() -> None:
    text = SOURCES.read_text(encoding="utf-8")
    section = text.split("## What you can drop in", 1)[1].split("\n## ", 1)[0]
    missing = [ext for ext in FORMATS if ext != ".zip" and f"`{ext}`" not in section]
    assert FORMATS and missing == []
    assert "Slack export (folder or `.zip`)" in section
