"""The pipeline tools called as plain functions for a caller made current."""

from __future__ import annotations

import pytest

from memserver.errors import ToolErrorKind
from memserver.kb.layout import KBPaths
from memserver.server.scope import Scope
from memserver.server.tools.base import CallContext, MemoryToolError, Services, calling
from memserver.server.tools.pipeline import source_mark, source_read

NOTE = "projects/usage-metering.md"


def test_a_source_is_read_in_pages_and_marked_called_directly(example_kb: KBPaths) -> None:
    services = Services(paths=example_kb)
    with calling(CallContext("source_read", Scope.trusted(), services)):
        first = source_read(NOTE, limit=100)
        assert first["path"] == NOTE and len(first["content"]) == 100
        rest = source_read(NOTE, offset=first["next_offset"] or 0)
        assert rest["next_offset"] is None and rest["hash"] == first["hash"]
        marked = source_mark(NOTE, "ingested", hash=first["hash"], pages=["projects/x"])
        assert marked["status"] == "ingested" and marked["pages"] == ["projects/x"]
        with pytest.raises(MemoryToolError) as refused:
            source_mark(NOTE, "failed")
    assert refused.value.kind is ToolErrorKind.ARGUMENTS
    assert services.ingest.status().as_dict()  # the calls were followed
