"""The extractive digest: dated, cited lines from kb_query results, or a plain 'no answer'."""

from __future__ import annotations

from read_agent.citations import extract_citations
from read_agent.extractive import HEADER, NO_ANSWER, SNIPPET_CHARS, digest


def test_digest_lists_dated_cited_pages_best_first() -> None:
    result = {
        "results": [
            {
                "id": "meetings/2026-11-12-globex-integration-review",
                "title": "Globex integration review",
                "date": "2026-11-12",
                "snippet": "Globex integration review — Decisions\nGo-live on 2026-12-01.",
            },
            {"id": "companies/globex", "title": "Globex", "date": None, "snippet": "Customer."},
            {"id": "companies/globex", "title": "Globex", "date": None, "snippet": "dup"},
        ],
        "time": {"window": None, "order": "newest"},
    }
    text, sources = digest(result)
    lines = text.splitlines()
    assert lines[0] == HEADER
    assert lines[1] == (
        "- 2026-11-12 · Globex integration review: Go-live on 2026-12-01. "
        "[meetings/2026-11-12-globex-integration-review]"
    )
    assert lines[2] == "- Globex: Customer. [companies/globex]"
    assert len(lines) == 3
    assert [s.id for s in sources] == extract_citations(text)


def test_digest_names_the_window_and_cuts_long_snippets() -> None:
    result = {
        "results": [
            {"id": "meetings/a", "title": "A", "date": "2026-11-10", "snippet": "w " * 400}
        ],
        "time": {"window": {"start": "2026-11-09T00:00:00+08:00", "end": "2026-11-16T00:00"}},
    }
    text, _ = digest(result, limit=3)
    assert "from 2026-11-09 up to 2026-11-16" in text.splitlines()[0]
    assert len(text.splitlines()[1]) < SNIPPET_CHARS + 60


def test_digest_without_results_says_there_is_no_answer() -> None:
    assert digest({"results": []}) == (NO_ANSWER, [])
    assert digest({}) == (NO_ANSWER, [])
