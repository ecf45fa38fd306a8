"""The web console at ``/ui``: the memory, its timeline, graph, ingest ledger and review
queue in a browser, signed in with the same tokens as MCP.

It sits above ``server`` and below ``up``: it imports ``server`` (the tools, run in
process for the signed-in token's scope, tokens, audit), ``store``, ``kb`` and below,
and is mounted into the memory server's HTTP app by ``serve`` and ``up``.
"""
