"""One source's drafts on their way to the store: combined and cross-linked, resolved to
the pages they mean, merged into the stored page by the merge rules; an earlier holder's
claim to a one-holder role ended (``holders``); a change held for a person written in one
format (``held``: the model's proposals, ``ingest_agent.llm.review``, use it too).
Imports ``ingest_agent.records``, ``names``, ``errors``, ``memory`` and memserver's low
floors; never the agent, the extractors or llm."""
