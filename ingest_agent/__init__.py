"""The ingest agent of Memory System: an MCP client of the memory server.

Bottom to top: ``errors`` and ``names`` (comparing names); ``records`` (what flows
through the agent); ``memory`` (the server's tools); ``extract/`` (a note read by rules)
and ``pages/`` (drafts on their way to the store), which never import each other;
``llm/`` (the model's tasks, standing on both); ``agent`` (the loop), ``heartbeat`` (a
file a watch loop touches) and ``cli`` (the program) on top. ``tests/ingest_agent/test_layout.py`` checks the order.
"""
