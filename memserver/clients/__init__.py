"""Clients of other services: the OpenAI-compatible LLM, embedders, the reranker, laya, and
the MCP client the agents use; their settings (config), TLS and token budgets. Imports
only ``kb`` (laya is asked about the schema's folders); every package above uses it."""
