"""The search tools called as plain functions for a caller made current."""

from __future__ import annotations

import datetime as dt

import pytest

from memserver.errors import ToolErrorKind
from memserver.server.tools.base import MemoryToolError
from memserver.server.tools.search import (
    folder_list,
    kb_latest,
    kb_query,
    kb_timeline,
    now_as_of,
)
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


def test_as_of_with_a_now_that_has_no_offset_ends_that_day_without_one() -> None:
    """``now`` without an offset (the CLI's ``--now 2026-12-02T10:00:00``) and an earlier
    ``as_of``: the end of that day, naive too (comparing them used to raise)."""
    day = dt.date(2026, 8, 31)
    assert now_as_of("2026-12-02T10:00:00", day) == dt.datetime(2026, 8, 31, 23, 59, 59)
    assert now_as_of("2026-08-01T10:00:00", day) == dt.datetime(2026, 8, 1, 10, 0)
    aware = now_as_of(NOW, day)
    assert aware is not None and aware.utcoffset() == dt.timedelta(hours=8)
