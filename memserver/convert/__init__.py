"""Converters of the sources people have (transcripts, email, Slack exports, Word, PDF,
slides, spreadsheets, web pages) into the markdown notes the rest of the system reads.

The lowest package: it imports nothing of the project above ``memserver.errors``.
``formats`` lists the extensions; ``isolated.convert_isolated`` converts one original
in a limited child process (``worker``); ``note.Note`` is what a unit becomes.
"""
