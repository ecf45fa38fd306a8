"""PostgreSQL: the embedded server, connections and pool, numbered migrations, vector columns.
Imports only ``memserver.kb`` (where the embedded data lives); graph, index, search and
store run their SQL through its ``Database``."""
