"""The knowledge base service: the one safe way to write a page (validate, version, write
the file and index it in step), read it back, its history and restore, scans and reindex.
Imports ``index``, ``db``, ``kb``, ``timeparse`` and ``clients``; never ``search`` or ``server``."""
