"""The graph tools called as plain functions for a caller made current."""

from __future__ import annotations

import uuid

import pytest

from memserver.errors import NotFoundError
from memserver.server.tools.graph import kb_neighbors, kb_resolve
from memserver.server.tools.page_input import PageInput
from memserver.server.tools.pages import kb_put_page
from tests.memserver.server.tools.conftest import Served


def test_the_graph_tools_answer_called_directly(served: Served) -> None:
    served("kb_resolve")
    title = f"Graph Direct {uuid.uuid4().hex[:8]}"
    put = kb_put_page(folder="people", page=PageInput(title=title, fields={"role": "Analyst"}))
    resolved = kb_resolve(title, folder="people")
    assert resolved["verdict"] == "exists" and resolved["candidates"][0]["id"] == put["id"]
    around = kb_neighbors(id=put["id"], direction="out")
    assert around["id"] == put["id"] and around["edges"] == []
    with pytest.raises(NotFoundError):
        kb_neighbors(id=f"people/nobody-{uuid.uuid4().hex[:8]}")
