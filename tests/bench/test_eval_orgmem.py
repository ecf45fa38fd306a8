"""eval_orgmem's kb_brief arm: the notes a brief's evidence cites, in order."""

from __future__ import annotations

from pathlib import Path

from bench.eval_orgmem import NoteNames, brief_notes


def test_a_briefs_notes_are_those_its_evidence_cites_in_order(tmp_path: Path) -> None:
    names = NoteNames(tmp_path, ["ART-1", "ART-12", "ART-2"])
    brief = {
        "subjects": [{"id": "meetings/x", "title": "ART-2 is named here but cites nothing"}],
        "evidence": [
            {"label": "direct", "source": "ART-12.md", "text": "ART-1 said so"},
            {"label": "inferred", "source": None, "page": "meetings/x"},
            {"label": "direct", "source": "ART-1.md"},
            {"label": "direct", "source": "ART-12.md"},
        ],
    }
    assert brief_notes(brief, names) == ["ART-12", "ART-1"]
    assert brief_notes({"evidence": []}, names) == []
