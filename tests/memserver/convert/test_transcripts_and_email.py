"""Transcripts and email as notes: speakers and senders as people, dated, one note per
transcript and per thread, quoted text and private messages handled."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memserver.convert.errors import ConversionError
from memserver.convert.isolated import convert_isolated
from memserver.convert.outlook import msg_as_eml
from memserver.kb.frontmatter import read_frontmatter
from memserver.kb.redact import redact_private
from tests.memserver.convert.originals import MSG, SRT, VTT, budget_thread, write_mbox


def test_a_vtt_with_voices_is_one_note_by_its_speakers_dated_by_its_name() -> None:
    [note] = convert_isolated("vtt", "2026-09-22-globex-sync.vtt", VTT.encode())
    assert (note.title, note.date, note.attendees) == (
        "Globex sync",
        dt.date(2026, 9, 22),
        ("Alice Chen", "Bob Martinez"),
    )
    lines = [line for line in note.body.splitlines() if line]
    assert lines[1] == (
        "Bob Martinez: The Pueblo warehouse goes live with the tracking link on October 5. "
        "We also need twelve more driver tablets."
    )  # one speaker's cues in a row are one turn
    front = read_frontmatter(note.render())
    assert front["attendees"] == ["Alice Chen", "Bob Martinez"]
    assert "bonus" not in redact_private(note.render())


def test_an_srt_takes_speakers_from_name_cues_and_its_date_from_the_first_cue() -> None:
    text = "1\n00:00:00,500 --> 00:00:01,000\nRecorded 2026-11-01.\n\n" + SRT
    [note] = convert_isolated("srt", "kestrel-kickoff.srt", text.encode())
    assert note.title == "Kestrel kickoff" and note.date == dt.date(2026, 11, 1)
    assert note.attendees == ("Priya Shah", "Tom Becker")
    assert "Tom Becker: I will own the Kestrel rollout checklist." in note.body


def test_an_mbox_is_one_note_per_thread_with_replies_in_order_and_private_ones_hidden(
    tmp_path: Path,
) -> None:
    notes = convert_isolated("mbox", "team.mbox", write_mbox(tmp_path / "team.mbox").read_bytes())
    assert [(n.title, n.date, n.author) for n in notes] == [
        ("Plover budget", dt.date(2026, 10, 14), "Alex Kim"),
        ("Wren offsite", dt.date(2026, 11, 2), "Tom Becker"),
        ("Salaries", dt.date(2026, 11, 3), "Maria Lopez"),
    ]
    budget = notes[0]
    assert budget.attendees == ("Alex Kim", "Maria Lopez")
    assert budget.body.index("needs a budget") < budget.body.index("Approved")
    assert budget.body.count("needs a budget") == 1  # the quoted copy in the reply is gone
    assert "wrote:" not in budget.body
    assert "9,000" not in redact_private(notes[2].render())
    assert len({n.name for n in notes}) == 3


def test_an_eml_is_one_note_of_its_message() -> None:
    [note] = convert_isolated("eml", "approval.eml", budget_thread()[1].as_bytes())
    assert (note.title, note.date, note.author) == (
        "Plover budget",
        dt.date(2026, 10, 14),
        "Maria Lopez",
    )
    assert note.attendees == ("Maria Lopez", "Alex Kim")


def test_an_outlook_msg_is_the_note_its_eml_would_be() -> None:
    [note] = convert_isolated("msg", "outer.msg", MSG.read_bytes())
    assert (note.title, note.date, note.attendees) == (
        "outer subject",
        dt.date(2016, 11, 15),  # its delivery time: a saved draft has no Date header
        ("outer@foo.bar",),
    )
    assert "Outer body" in note.body
    assert "Attachments (not opened): test" in note.body  # an attached message, not opened
    as_eml = msg_as_eml("outer.msg", MSG.read_bytes())
    assert convert_isolated("eml", "outer.msg", as_eml) == [note]


@pytest.mark.parametrize(
    ("kind", "data", "problem"),
    [
        ("vtt", b"not a transcript", "not a valid VTT transcript"),
        ("srt", b"\xff\xfe garbage", "not UTF-8"),
        ("mbox", b"Subject: hi\n\nno From line", "not an mbox file"),
        ("eml", b"just some words", "holds no email headers"),
        ("msg", b"just some words", "not an Outlook message (no OLE2 header)"),
        ("msg", MSG.read_bytes()[:4096], "a truncated or damaged Outlook message?"),
    ],
)
def test_a_broken_file_names_the_problem_and_the_fix(kind: str, data: bytes, problem: str) -> None:
    with pytest.raises(ConversionError) as caught:
        convert_isolated(kind, f"broken.{kind}", data)
    assert problem in caught.value.message and caught.value.fix


def test_the_converter_process_sees_no_secret_of_its_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_TOKEN", "ms_secret_token")
    monkeypatch.setenv("LLM_API_KEY", "sk-secret")
    seen: dict[str, str] = {}
    real_run = subprocess.run

    def run(*args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs["env"])
        return real_run(*args, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)
    [note] = convert_isolated("srt", "kestrel.srt", SRT.encode())
    assert note.attendees == ("Priya Shah", "Tom Becker")
    assert "PATH" in seen and not {"MEMORY_TOKEN", "LLM_API_KEY"} & set(seen)
