"""The read agent's API key under ``memserver up``, and how ``up`` writes its secrets.

``up`` starts the read agent with a key (``READ_AGENT_API_KEY`` in its environment), so
that no request reaches the knowledge base without one, even on loopback: a web page
the user visits can send requests to 127.0.0.1. The key is ``READ_AGENT_API_KEY`` when
that is set, else a random one kept with the tokens in
``<kb>/.memserver/tokens/read-agent.key`` (mode 0600) and reused on the next start.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

KEY_ENV = "READ_AGENT_API_KEY"
KEY_FILE = "read-agent.key"
KEY_PREFIX = "ra_"


def ensure_agent_key(directory: Path, env: Mapping[str, str] | None = None) -> str:
    """The key clients of the read agent must send (see the module docstring)."""
    given = (os.environ if env is None else env).get(KEY_ENV, "").strip()
    if given:
        return given
    path = directory / KEY_FILE
    try:
        saved = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        saved = ""
    if saved.startswith(KEY_PREFIX):
        return saved
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    write_secret(path, key)
    return key


def write_secret(path: Path, secret: str) -> None:
    """Write ``secret`` to ``path`` readable by its owner only (mode 0600), all at once."""
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secret + "\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
