"""Shared fixtures live in tests/fixtures/, one module per kind of resource.

- ``kb``: a fresh copy of example_kb and small generated knowledge bases.
- ``db``: the embedded PostgreSQL (or ``DATABASE_URL``), a fresh database per test.
- ``llm_server``: a local OpenAI-compatible test server with scripted answers, and a
  fake laya sidecar, over real HTTP on loopback.
"""

pytest_plugins = [
    "tests.fixtures.kb",
    "tests.fixtures.db",
    "tests.fixtures.llm_server",
    "tests.fixtures.server",
]
