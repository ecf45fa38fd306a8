"""How much of a text an embedder is given: at most the model's window.

An embedding model reads a fixed window of tokens (multilingual-e5-small: 512). The
local engine embeds a longer text window by window and averages, so a 20 KB question
cost 40 windows (48 s on a loaded machine, stalling every query behind it) for a vector
no better than the first window's. Every text is cut to the window first:

- local: to ``E5_WINDOW_TOKENS`` tokens as the model counts them for a passage, and to
  ``E5_QUERY_TOKENS`` for a query (cut by characters first, so counting stays cheap,
  then shortened until it fits). A question's meaning is in its first hundred tokens;
  the rest only cost time (attention grows with the square of the length) while the
  model is held and other queries wait;
- remote (OpenAI-compatible) and hash: to ``MAX_EMBED_CHARS`` characters (a remote
  endpoint refuses over-long input; the hash embedder is linear but not free).

Chunks are built well under the window (``memserver.kb.chunks``), so only outsized
input (a question, a title, a one-line table) is ever cut.
"""

from __future__ import annotations

from typing import Any

E5_WINDOW_TOKENS = 510  # 512 with the begin and end markers
E5_QUERY_TOKENS = 128
MAX_CHARS_PER_TOKEN = 8  # a generous bound: tokens are rarely longer than this
MAX_EMBED_CHARS = 24_000


def fit_window(model: Any, text: str, is_query: bool) -> str:
    """``text`` cut to what the local model reads in one window (``model.token_count``)."""
    window = E5_QUERY_TOKENS if is_query else E5_WINDOW_TOKENS
    if len(text) <= window:  # a token is at least one character
        return text
    text = text[: window * MAX_CHARS_PER_TOKEN]
    for _ in range(8):
        tokens = int(model.token_count(text, is_query))
        if tokens <= window:
            return text
        text = text[: max(1, int(len(text) * window / tokens * 0.97))]
    return text[:window]


def cap_chars(text: str, limit: int = MAX_EMBED_CHARS) -> str:
    """``text`` cut to ``limit`` characters."""
    return text if len(text) <= limit else text[:limit]
