"""The typed graph: links read off a page (fields, link verbs, wikilinks), wiring them to
the pages they name, neighbours of a page and entity resolution (does a page for a name
exist). Imports ``db``, ``kb`` and ``clients``."""
