"""MCP tools of the memory server, one module per tool group.

Each module in ``TOOL_MODULES`` defines its tools as top-level functions marked
``@tool(...)`` (see ``memserver.server.tools.base``). An area adds its tools by writing
``memserver/server/tools/<group>.py`` and one line here.
"""

from __future__ import annotations

import importlib

from memserver.server.tools.base import ToolHost, register

# Order is the order of tools/list.
TOOL_MODULES: tuple[str, ...] = (
    "pipeline",  # source_pending, source_read, source_mark, source_claim, source_release
    "pages",  # kb_schema, kb_get_page, kb_list_pages, kb_history, kb_put_page
    "route",  # kb_route
    "search",  # kb_query, kb_timeline, kb_latest
    "brief",  # kb_brief
    "wakeup",  # kb_wakeup
    "graph",  # kb_neighbors, kb_resolve
)


def register_all(server: ToolHost) -> None:
    """Add every tool group to ``server``."""
    for name in TOOL_MODULES:
        register(server, importlib.import_module(f"memserver.server.tools.{name}").__name__)
