"""Argument helpers shared by subcommands: the knowledge base of ``--kb``, comma lists."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memserver.clients.config import Settings
    from memserver.store.knowledge_base import KnowledgeBase


def open_kb(
    args: argparse.Namespace, settings: Settings | None = None, *, check_embedding: bool = True
) -> KnowledgeBase:
    """The knowledge base of ``args.kb``, with ``settings`` or those of ``args.config``."""
    from memserver.store.knowledge_base import KnowledgeBase

    return KnowledgeBase.open(
        args.kb, settings, config=args.config, check_embedding=check_embedding
    )


def comma_list(value: str | None) -> list[str] | None:
    """The non-empty items of a comma-separated option, or None when it was not given."""
    if not value:
        return None
    return [item.strip() for item in value.split(",") if item.strip()]
