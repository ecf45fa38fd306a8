"""The page tools called as plain functions for a caller made current."""

from __future__ import annotations

import uuid

import pytest

from memserver.errors import NotFoundError, PageValidationError, VersionConflictError
from memserver.server.tools.page_input import PageInput
from memserver.server.tools.pages import kb_get_page, kb_history, kb_put_page, kb_schema
from tests.memserver.server.tools.conftest import Served


def test_the_page_tools_write_and_read_a_page_called_directly(served: Served) -> None:
    served("kb_put_page")
    title = f"Direct Call {uuid.uuid4().hex[:8]}"
    schema = kb_schema()
    assert schema["can_write"] and "people" in [f["name"] for f in schema["folders"]]
    assert schema["organisation"] == {"name": "Acme Logistics", "aliases": ["Acme"]}
    put = kb_put_page(folder="people", page=PageInput(title=title, fields={"role": "Analyst"}))
    assert put["created"] and put["version"] == 1
    page = kb_get_page(id=put["id"])
    assert page["title"] == title and page["fields"]["role"] == "Analyst"
    changed = PageInput(title=title, fields={"role": "Lead Analyst"})
    assert kb_put_page(id=put["id"], page=changed, base_version=1)["version"] == 2
    assert [v["version"] for v in kb_history(id=put["id"])["versions"]] == [2, 1]
    # the function raises the memory system's errors; the server translates them
    with pytest.raises(VersionConflictError):
        kb_put_page(id=put["id"], page=changed, base_version=1)
    with pytest.raises(PageValidationError):
        kb_put_page(folder="meetings", page=PageInput(title="No date"))
    with pytest.raises(NotFoundError):
        kb_get_page(folder="people", slug=f"nobody-{uuid.uuid4().hex[:8]}")
