"""The page tools called as plain functions for a caller made current."""

from __future__ import annotations

import uuid

import pytest

from memserver.errors import NotFoundError, PageValidationError, VersionConflictError
from memserver.server.tools.base import MemoryToolError
from memserver.server.tools.page_input import PageInput
from memserver.server.tools.pages import (
    kb_get_page,
    kb_history,
    kb_list_pages,
    kb_put_page,
    kb_schema,
)
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


def test_pages_are_listed_by_a_field_s_value_and_a_bad_filter_names_its_fix(
    served: Served,
) -> None:
    served("kb_list_pages")
    title = f"Filtered {uuid.uuid4().hex[:8]}"
    kb_put_page(folder="people", page=PageInput(title=title, fields={"role": "Filter Probe"}))
    served("kb_list_pages")
    listed = kb_list_pages(folder="people", field="role", value="filter probe")
    assert [p["title"] for p in listed["pages"]] == [title] and listed["total"] == 1
    with pytest.raises(MemoryToolError, match="go together"):
        kb_list_pages(folder="people", field="role")
    with pytest.raises(MemoryToolError, match="in folder 'people' use one of: role"):
        kb_list_pages(folder="people", field="salary", value="1")
    with pytest.raises(MemoryToolError, match="give folder="):
        kb_list_pages(field="role", value="CTO")
