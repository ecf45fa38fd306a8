"""The README's source section lists every format a converter reads."""

from __future__ import annotations

from pathlib import Path

from memserver.convert.formats import FORMATS

README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_readme_lists_every_converted_format() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Sources: what you can drop in", 1)[1].split("\n## ", 1)[0]
    missing = [ext for ext in FORMATS if ext != ".zip" and f"`{ext}`" not in section]
    assert FORMATS and missing == []
    assert "Slack export (folder or `.zip`)" in section
