"""Clients of other services: the OpenAI-compatible LLM, embedders, the reranker, laya,
and the MCP client the agents use; their settings (config), TLS and token budgets.
Imports only ``memserver.errors`` and ``memserver.kb``; used by every package above."""
