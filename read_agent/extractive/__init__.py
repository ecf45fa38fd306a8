"""The answer without a language model: the question read, pages and raw notes cut into
dated evidence, windows listed, follow-ups resolved, and the reply composed.
Imports ``read_agent.tools`` and the low floors of ``memserver``."""
