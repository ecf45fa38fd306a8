"""The MCP memory server: scoped tools over Streamable HTTP and stdio, tokens, the scope
every tool enforces, and the audit log. Imports every package below it (store, search,
routing, index, graph, db, kb, clients); nothing imports it but ``up`` and ``commands``."""
