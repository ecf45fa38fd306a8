"""The ingest agent of Memory System: an MCP client of the memory server."""
