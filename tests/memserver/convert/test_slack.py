"""A Slack export as notes: one per channel and day, real names, replies under their
parent on its day, Slack's escaping undone so <private> spans are redacted."""

from __future__ import annotations

import datetime as dt
import json
import zipfile
from pathlib import Path

import pytest

from memserver.convert.errors import ConversionError
from memserver.convert.isolated import convert_isolated
from memserver.kb.redact import redact_private
from tests.memserver.convert.originals import slack_export, zip_folder


def test_an_export_zip_is_a_note_per_channel_and_day_with_threads_kept_together(
    tmp_path: Path,
) -> None:
    export = zip_folder(slack_export(tmp_path / "acme"), tmp_path / "acme.zip")
    first, second = convert_isolated("slack", "acme.zip", export.read_bytes())
    assert (first.name, first.date, first.title) == (
        "ops/2026-10-20",
        dt.date(2026, 10, 20),
        "#ops — 2026-10-20",
    )
    assert first.attendees == ("Priya Shah", "Tom Becker") and first.extra == {"channel": "ops"}
    blocks = first.body.split("\n\n")
    assert blocks[:3] == [
        "**Priya Shah** 08:02\nThe Magpie depot moves to Denver on November 9. "
        "@Tom Becker can you confirm?",
        "↳ **Tom Becker** 08:07\nConfirmed, Magpie moves on November 9.",
        "↳ **Priya Shah** 2026-10-21 08:02\nMovers booked for Magpie.",  # a later reply
    ]
    assert "4111" not in redact_private(first.render())
    assert (second.name, second.attendees) == ("ops/2026-10-21", ("Priya Shah",))
    assert "Movers booked" not in second.body


def test_a_private_channel_is_kept_inside_private(tmp_path: Path) -> None:
    root = slack_export(tmp_path / "acme")
    (root / "groups.json").write_text(json.dumps([{"id": "G1", "name": "ops"}]), "utf-8")
    notes = convert_isolated("slack", "acme.zip", zip_folder(root, tmp_path / "a.zip").read_bytes())
    assert len(notes) == 2 and all("Magpie" not in redact_private(n.render()) for n in notes)


def test_a_zip_without_users_json_is_not_taken_for_an_export(tmp_path: Path) -> None:
    path = tmp_path / "photos.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("ops/2026-10-20.json", "[]")
    with pytest.raises(ConversionError, match=r"not a Slack export: it has no users.json"):
        convert_isolated("slack", "photos.zip", path.read_bytes())
