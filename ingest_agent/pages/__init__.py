"""One source's drafts on their way to the store: combined and cross-linked, resolved to
the pages they mean, merged into the stored page by the merge rules (what waits for a person is
``ingest_agent.llm.review``, which checks proposals against the note's words).
Imports ``ingest_agent.records``, ``names``, ``errors``, ``memory`` and memserver's low
floors; never the agent, the extractors or llm."""
