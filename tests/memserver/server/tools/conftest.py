"""Fixtures for calling tool functions directly, as the server calls them.

- ``served`` (function): ``served(tool)`` makes the session memory server's caller
  current for ``tool`` (all folders, write and source access) and returns its
  ``Services``; the tool function can then be called as a plain function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from memserver.server.scope import Scope
from memserver.server.tools.base import CallContext, Services, calling
from tests.fixtures.server import RunningServer

Served = Callable[[str], Services]


@pytest.fixture
def served(mcp_server: RunningServer) -> Iterator[Served]:
    with ExitStack() as stack:

        def call(tool: str) -> Services:
            services = mcp_server.server.services
            stack.enter_context(calling(CallContext(tool, Scope.trusted(), services)))
            return services

        yield call
