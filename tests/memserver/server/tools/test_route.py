"""kb_route called as a plain function for a caller made current."""

from __future__ import annotations

import pytest

from memserver.errors import ToolErrorKind
from memserver.server.tools.base import MemoryToolError
from memserver.server.tools.route import kb_route
from tests.memserver.server.tools.conftest import Served


def test_kb_route_scores_the_folders_called_directly(served: Served) -> None:
    served("kb_route")
    routed = kb_route("Weekly sync with Globex: attendees Alice and Bob", ["meetings", "people"])
    assert {s["folder"] for s in routed["scores"]} == {"meetings", "people"}
    assert routed["stage"]
    with pytest.raises(MemoryToolError) as refused:
        kb_route("text", ["no-such-folder"])
    assert refused.value.kind is ToolErrorKind.ARGUMENTS
