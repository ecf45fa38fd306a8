"""A note read without a model: its parts, running text and dates, and the rules extractor
that turns them into page drafts. Imports ``ingest_agent.records``, ``ingest_agent.names``
and memserver's low floors (``kb``, ``timeparse``); never the agent, pages or llm."""
