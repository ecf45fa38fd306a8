"""The tokens ``up`` hands to the agents: an ingest token (write) and a read token, each
saved under ``<kb>/.memserver/tokens/`` (mode 0600) and reused while the store accepts
it, plus the read agent's API key."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memserver.errors import NotFoundError
from memserver.kb.layout import KBPaths
from memserver.up.agent_key import ensure_agent_key, write_secret

if TYPE_CHECKING:
    from memserver.server.tokens import TokenStore

INGEST_TOKEN = "up-ingest"
READ_TOKEN = "up-read"


@dataclass(frozen=True)
class UpTokens:
    """The secrets of the two tokens ``up`` hands to the agents (and prints for clients)."""

    ingest: str = field(repr=False)
    read: str = field(repr=False)
    directory: Path
    agent_key: str = field(default="", repr=False)  # what clients send the read agent

    def file(self, name: str) -> Path:
        return self.directory / f"{name}.token"


def tokens_dir(paths: KBPaths) -> Path:
    return paths.state / "tokens"


def ensure_tokens(paths: KBPaths, store: TokenStore) -> UpTokens:
    """The ingest and read tokens, reused while ``store`` accepts their saved secrets."""
    directory = private_dir(tokens_dir(paths))
    return UpTokens(
        ingest=ensure_token(store, directory, INGEST_TOKEN, write=True),
        read=ensure_token(store, directory, READ_TOKEN, write=False),
        directory=directory,
        agent_key=ensure_agent_key(directory),
    )


def ensure_token(store: TokenStore, directory: Path, name: str, *, write: bool) -> str:
    """The secret of token ``name`` (all folders; ``write`` access as given).

    The secret saved in ``directory/<name>.token`` is reused when the store still knows
    it as an active token of that name and scope; otherwise any live token of that name
    is revoked and a new one is created and saved (mode 0600).
    """
    path = directory / f"{name}.token"
    try:
        saved = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        saved = ""
    token = store.verify(saved) if saved else None
    if token is not None and token.name == name and token.all_folders and token.write == write:
        return saved
    with contextlib.suppress(NotFoundError):
        store.revoke(name)
    created = store.create(name, "*", write=write)
    write_secret(path, created.secret)
    return created.secret


def private_dir(path: Path) -> Path:
    """``path``, made if needed, readable by its owner only."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path
