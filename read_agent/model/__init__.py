"""What the agent asks of a language model: the tool-calling loop, calls written as text,
and the answer a model writes from the extractive evidence, checked against it.
Imports ``read_agent.tools``, ``read_agent.extractive`` and the low floors of ``memserver``."""
