"""What one caller may see and do: the scope every tool enforces server-side.

A ``Scope`` comes from a token (``Scope.of_token``) or is the trusted admin scope
(``Scope.trusted()``, stdio ``--trusted``). ``folders`` is ``None`` for all schema
folders, otherwise the granted schema folders (``source`` is kept apart in
``source``). Pass ``scope.folders`` straight to the knowledge base service: it treats
an out-of-scope page exactly like a missing one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memserver.errors import ScopeError
from memserver.server.tokens import ALL_FOLDERS, SOURCE_FOLDER, Token

TRUSTED_NAME = "trusted"


@dataclass(frozen=True)
class Scope:
    token_name: str
    folders: frozenset[str] | None  # None = every schema folder
    write: bool
    source: bool  # raw sources and the pipeline tools

    @classmethod
    def trusted(cls, name: str = TRUSTED_NAME) -> Scope:
        """Everything: local admin use (``serve --stdio --trusted``)."""
        return cls(token_name=name, folders=None, write=True, source=True)

    @classmethod
    def of_token(cls, token: Token) -> Scope:
        if token.all_folders:
            return cls(token_name=token.name, folders=None, write=token.write, source=True)
        granted = frozenset(token.folders)
        return cls(
            token_name=token.name,
            folders=granted - {SOURCE_FOLDER},
            write=token.write,
            source=SOURCE_FOLDER in granted,
        )

    @property
    def all_folders(self) -> bool:
        return self.folders is None

    def allows_folder(self, folder: str) -> bool:
        """Whether pages of this schema folder are visible."""
        return self.folders is None or folder in self.folders

    def filter_folders(self, folders: Iterable[str]) -> list[str]:
        """The given folders that are in scope, in their original order."""
        return [f for f in folders if self.allows_folder(f)]

    def page_visible(self, page_id: str) -> bool:
        """Whether a ``folder/slug`` id is in scope (a malformed id is not)."""
        folder, sep, slug = page_id.partition("/")
        return bool(sep and folder and slug) and self.allows_folder(folder)

    @property
    def can_use_pipeline(self) -> bool:
        return self.source and self.write

    def require_write(self) -> None:
        if not self.write:
            raise ScopeError(
                f"token {self.token_name!r} is read-only",
                "use a token created with --write for this tool",
            )

    def require_pipeline(self) -> None:
        """The pipeline tools need the ``source`` folder (or ``*``) and write access."""
        if not self.can_use_pipeline:
            raise ScopeError(
                f"token {self.token_name!r} may not use the source pipeline",
                "use a token created with --folders including 'source' (or '*') and --write",
            )

    def describe(self) -> str:
        folders = ALL_FOLDERS if self.folders is None else ",".join(sorted(self.folders)) or "-"
        extra = "+source" if self.source and self.folders is not None else ""
        return f"{self.token_name} [{folders}{extra}, {'write' if self.write else 'read'}]"
