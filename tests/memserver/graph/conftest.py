"""Fixtures for the graph tests.

- ``writer``: a ``PageWriter`` over a knowledge base with the graph schema
  (``graph_pages.SCHEMA_TEXT``) on a fresh database.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures.kb import MakeKB
from tests.memserver.graph.graph_pages import PageWriter, open_writer


@pytest.fixture
def writer(make_kb: MakeKB, database_url: str) -> Iterator[PageWriter]:
    yield from open_writer(make_kb, database_url)
