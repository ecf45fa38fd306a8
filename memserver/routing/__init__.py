"""Routing: which schema folders a text belongs to (laya, then the LLM, then lexical and
embedding scores). Imports only ``clients`` and ``kb``: a note is routed before it is a
page, so nothing here reads the index."""
