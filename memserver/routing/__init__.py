"""Routing: which schema folders a text belongs to (laya, then the LLM, then lexical and
embedding scores). Imports ``index``, ``db``, ``kb`` and ``clients`` (not search: a note is
routed before it is a page)."""
