"""Memory System: the memory server and the library the agents share."""

__version__ = "0.1.0"
