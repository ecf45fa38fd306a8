"""`memserver route`: which schema folders a text belongs to (laya -> LLM -> lexical)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memserver.errors import UserError
from memserver.kb.layout import KBPaths
from memserver.terminal.output import print_json

if TYPE_CHECKING:
    import numpy as np

    from memserver.clients.config import EndpointSettings
    from memserver.routing.router import Embed

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this area's subcommands to the `memserver` parser."""
    route = sub.add_parser(
        "route",
        help="show which schema folders a text belongs to, with scores",
        description="Route TEXT to the knowledge base's folders through laya, then the LLM, "
        "then lexical matching (each stage used when configured and up). Prints the "
        "folders at or above the threshold, the stage that answered and any degradation.",
    )
    route.add_argument("text", nargs="+", help="the text to route ('-' reads stdin)")
    route.add_argument(
        "--folder",
        action="append",
        dest="folders",
        metavar="NAME",
        help="consider only this folder (repeatable; default: all)",
    )
    route.add_argument(
        "--threshold", type=float, help="minimum score (default: laya.threshold or 0.5)"
    )
    route.add_argument("--json", action="store_true", help="print JSON")
    route.set_defaults(func=run_route)


def run_route(args: argparse.Namespace) -> int:
    from memserver.clients.config import load_settings
    from memserver.kb.schema import load_schema
    from memserver.routing.router import Router

    text = sys.stdin.read() if args.text == ["-"] else " ".join(args.text)
    if not text.strip():
        raise UserError("nothing to route: TEXT is empty", "pass the text as arguments or on stdin")
    schema = load_schema(KBPaths.of(args.kb).schema)
    settings = load_settings(args.config)
    embed, embed_degraded = _embedder(settings.embedding)
    router = Router.from_settings(schema, settings, embed)
    if args.threshold is not None:
        if not 0 <= args.threshold <= 1:
            raise UserError(f"--threshold must be between 0 and 1, not {args.threshold}")
        router.threshold = args.threshold
    try:
        result = router.route(text, args.folders)
    finally:
        router.close()
    degraded = (*result.degraded, *embed_degraded)
    if args.json:
        print_json({**result.as_dict(), "degraded": list(degraded)})
        return 0
    print(f"stage: {result.stage}" + (f" (degraded: {', '.join(degraded)})" if degraded else ""))
    if not result.folders:
        print(f"no folder at or above {router.threshold:g}")
    chosen = set(result.names)
    for item in result.scores:
        mark = "*" if item.folder in chosen else " "
        print(f"{mark} {item.folder:<24} {item.score:.3f}")
    return 0


def _embedder(endpoint: EndpointSettings) -> tuple[Embed | None, tuple[str, ...]]:
    """The configured embedder's passage function, or None (keyword overlap only)."""
    try:
        from memserver.clients.embed import embedder_from_settings

        embedder = embedder_from_settings(endpoint)
    except Exception as exc:  # routing must still answer without embeddings
        log.warning("route: no embedder (%s); using keyword overlap only", exc)
        return None, ("embedding_unavailable",)

    def embed(texts: Sequence[str]) -> list[np.ndarray]:
        return embedder.embed_passages(texts)

    return embed, tuple(embedder.degraded)
