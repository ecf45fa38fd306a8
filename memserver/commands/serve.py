"""`memserver serve`: the MCP memory server over Streamable HTTP or stdio."""

from __future__ import annotations

import argparse
import logging
import os
from typing import TYPE_CHECKING

from memserver.errors import UserError
from memserver.kb.layout import KBPaths
from memserver.web.addr import parse_addr

if TYPE_CHECKING:
    from memserver.server.tools.base import Services
    from memserver.store.knowledge_base import KnowledgeBase

logger = logging.getLogger(__name__)

DEFAULT_ADDR = "127.0.0.1:8787"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `serve` to the `memserver` parser."""
    parser = sub.add_parser(
        "serve",
        help="serve the knowledge base over MCP (Streamable HTTP at /mcp, or stdio) and the web console",
        description="Serve MCP tools over Streamable HTTP (bearer tokens; /mcp, /healthz and "
        "the web console at /ui) "
        "or, with --stdio, over stdin/stdout as the token in MEMORY_TOKEN (or --trusted).",
    )
    parser.add_argument(
        "--addr", default=DEFAULT_ADDR, help=f"HOST:PORT to listen on (default {DEFAULT_ADDR})"
    )
    parser.add_argument(
        "--public-url",
        default=os.environ.get("MEMORY_PUBLIC_URL"),
        help="the https URL clients reach this server at, behind a TLS proxy (default: "
        "http://ADDR; env MEMORY_PUBLIC_URL). OAuth for remote MCP clients needs https, "
        "or a loopback address",
    )
    parser.add_argument("--stdio", action="store_true", help="serve over stdin/stdout")
    parser.add_argument(
        "--trusted",
        action="store_true",
        help="with --stdio: full access without a token (local admin use only)",
    )
    parser.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    import anyio

    from memserver.console.agent_link import ReadAgentLink
    from memserver.console.app import create_app
    from memserver.db.database import Database
    from memserver.server.audit import AuditLog
    from memserver.server.http_app import serve_http
    from memserver.server.mcp_server import build_server
    from memserver.server.scope import Scope
    from memserver.server.stdio import serve_stdio
    from memserver.server.tokens import TokenStore

    paths = KBPaths.of(args.kb)
    if not paths.schema.is_file():
        raise UserError(
            f"no schema.yaml in {paths.root}", "pass --kb with a knowledge base directory"
        )
    if args.trusted and not args.stdio:
        raise UserError("--trusted only works with --stdio", "HTTP always needs bearer tokens")
    secret = "" if args.trusted else os.environ.get("MEMORY_TOKEN", "")
    if args.stdio and not args.trusted and not secret:
        raise _no_stdio_token()
    host, port = parse_addr(args.addr)
    services = make_services(paths, args.config)
    services.schema()  # fail fast on a broken schema
    assert services.settings is not None
    # Tokens and the audit log live in the index database; the knowledge base (with its
    # embedder) still opens on first use.
    with Database.open(paths, services.settings.database_url, max_size=4) as db:
        tokens = TokenStore(db)
        audit = AuditLog(db)
        if args.stdio:
            if args.trusted:
                scope = Scope.trusted()
            else:
                token = tokens.verify(secret)
                if token is None:
                    raise _no_stdio_token()
                scope = Scope.of_token(token)
            recheck = None if args.trusted else tokens
            server = build_server(
                services, tokens=recheck, audit=audit, fixed_scope=scope, fixed_secret=secret
            )
            anyio.run(serve_stdio, server)
            return 0
        public_url = (args.public_url or f"http://{args.addr}").rstrip("/")
        server = build_server(services, tokens=tokens, audit=audit, public_url=public_url)
        logger.warning("serving %s on http://%s:%d/mcp (console: /ui)", paths.root, host, port)
        serve_http(
            create_app(server, host=host, port=port, read_agent=ReadAgentLink.from_env()),
            host,
            port,
        )
    return 0


def _no_stdio_token() -> UserError:
    return UserError(
        "MEMORY_TOKEN is missing, unknown, expired or revoked",
        "set MEMORY_TOKEN to a token from `memserver token create`, "
        "or use --trusted for local admin use",
    )


def make_services(paths: KBPaths, config: str | None) -> Services:
    """Services whose knowledge base opens on first use with the configured settings."""
    from memserver.clients.config import load_settings
    from memserver.server.tools.base import Services

    settings = load_settings(config)

    def open_kb() -> KnowledgeBase:
        from memserver.store.knowledge_base import KnowledgeBase

        return KnowledgeBase.open(paths.root, settings)

    return Services(paths=paths, kb_opener=open_kb, settings=settings)
