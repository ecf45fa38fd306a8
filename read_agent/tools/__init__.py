"""The memory server's read tools as the agent uses them: the tool set and its call log,
the pages a tool result names (which an answer may cite), and the query over raw notes.
Imports only the low floors of ``memserver``; nothing else of ``read_agent``."""
