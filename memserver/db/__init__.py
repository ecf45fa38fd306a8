"""PostgreSQL: the embedded server, connections and pool, numbered migrations, vector columns.
Imports ``memserver.kb`` and ``memserver.clients`` only; graph, index and search run SQL
through its ``Database``."""
