"""The read agent of Memory System: an MCP client of the memory server."""
