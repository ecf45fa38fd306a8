"""The search tools called as plain functions for a caller made current."""

from __future__ import annotations

import pytest

from memserver.errors import ToolErrorKind
from memserver.server.tools.base import MemoryToolError
from memserver.server.tools.search import folder_list, kb_latest, kb_query, kb_timeline
from tests.memserver.server.tools.conftest import Served

NOW = "2026-11-20T12:00:00+08:00"


def test_the_search_tools_answer_called_directly(served: Served) -> None:
    served("kb_query")
    found = kb_query("meetings last week", folders="meetings, people", now=NOW)
    assert sorted(found["folders"]) == ["meetings", "people"] and found["time"]
    assert isinstance(found["results"], list)
    latest = kb_latest("meetings", order="oldest", now=NOW)
    assert latest["mode"] == "balanced"
    window = kb_timeline(window="2026-09", now=NOW)
    assert window["window"] is not None and isinstance(window["events"], list)
    with pytest.raises(MemoryToolError) as refused:
        kb_query("  ")
    assert refused.value.kind is ToolErrorKind.ARGUMENTS


def test_folders_are_read_from_a_list_or_text() -> None:
    assert folder_list("people; meetings") == ["people", "meetings"]
    assert folder_list(["*"]) is None and folder_list(None) is None
