"""``read-agent``: cited, dated answers from the knowledge base.

::

    read-agent ask [--json] [--now ISO] QUESTION
    read-agent chat                       # /reset, /sources, /quit; reads stdin lines
    read-agent serve [--addr 127.0.0.1:8788]  # POST /ask, /v1/chat/completions, /v1/models

The memory server is reached with MEMORY_URL + MEMORY_TOKEN (or the config ``mcp``
block), or with ``--kb DIR``, which spawns a local stdio server. The model comes from
LLM_BASE_URL/LLM_MODEL/LLM_API_KEY or the config ``llm`` block; without one (or with
``--no-llm``) answers are extractive digests of the search results.

Errors are translated here: a user mistake prints one line and exits 2, any other
memory system error exits 1; neither prints a traceback.
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import sys
from collections.abc import Sequence
from typing import TextIO

import anyio

from memserver import __version__
from memserver.clients.config import Settings, load_settings
from memserver.errors import UserError
from memserver.terminal.output import print_json
from memserver.terminal.program import add_config_option, configure_logging, run_translating_errors
from memserver.timeparse.now import parse_now
from read_agent.agent import DEFAULT_MAX_STEPS, Answer, Turn
from read_agent.connection import AgentPool, env_api_key, make_llm, memory_target, unwrap
from read_agent.reading.embedding import reading_embedder
from read_agent.tools.citations import CitedPage

DEFAULT_ADDR = "127.0.0.1:8788"
CHAT_HELP = "/reset forgets the conversation, /sources lists the last answer's pages, /quit ends"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="read-agent",
        description="Answer questions from a Memory System knowledge base, with dates and "
        "[folder/slug] citations.",
    )
    add_config_option(parser)
    parser.add_argument(
        "--kb",
        default=None,
        help="serve this knowledge base locally over stdio (as MEMORY_TOKEN, else trusted) "
        "instead of connecting to MEMORY_URL",
    )
    parser.add_argument(
        "--no-llm",
        action="store_true",
        help="answer without a language model (extractive digest of the search results)",
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        default=DEFAULT_MAX_STEPS,
        help=f"most model turns that may call tools per question (default {DEFAULT_MAX_STEPS})",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    parser.add_argument("--version", action="version", version=f"read-agent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    ask = sub.add_parser("ask", help="answer one question")
    ask.add_argument("question", nargs="+", help="the question")
    ask.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    ask.add_argument("--now", default=None, help="reference time for relative dates (ISO)")
    ask.set_defaults(func=run_ask)

    chat = sub.add_parser("chat", help="a conversation in the terminal (reads stdin lines)")
    chat.add_argument("--now", default=None, help="reference time for relative dates (ISO)")
    chat.set_defaults(func=run_chat)

    serve = sub.add_parser(
        "serve", help="serve POST /ask and an OpenAI-compatible /v1/chat/completions"
    )
    serve.add_argument(
        "--addr", default=DEFAULT_ADDR, help=f"HOST:PORT or :PORT (default {DEFAULT_ADDR})"
    )
    serve.add_argument(
        "--api-key-env",
        default="READ_AGENT_API_KEY",
        help="environment variable holding the API key clients must send as a Bearer token "
        "(default READ_AGENT_API_KEY; unset = no key, allowed only on a loopback address)",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept browser requests from this web origin, e.g. https://chat.example.com "
        "(repeatable; loopback origins are always accepted)",
    )
    serve.add_argument(
        "--model-id", default="memory", help="model id listed by /v1/models (default memory)"
    )
    serve.add_argument(
        "--fd",
        type=int,
        default=None,
        help="serve on this inherited listening socket instead of opening --addr "
        "(memserver up hands over the port it holds)",
    )
    serve.set_defaults(func=run_serve)
    return parser


def make_pool(args: argparse.Namespace) -> AgentPool:
    settings: Settings = load_settings(args.config)
    if args.max_steps < 1:
        raise UserError(f"--max-steps must be at least 1, not {args.max_steps}")
    target = memory_target(settings, args.kb, args.config)
    pool = AgentPool(
        target,
        make_llm(settings, enabled=not args.no_llm),
        max_steps=args.max_steps,
        budget_tokens=settings.budget_tokens,
        embed=reading_embedder(settings.embedding),
    )
    args.pool = pool  # closed by main()
    return pool


# -- ask ---------------------------------------------------------------------------------------


def run_ask(args: argparse.Namespace) -> int:
    pool = make_pool(args)
    question = " ".join(args.question).strip()
    if not question:
        raise UserError("the question is empty", 'write it after ask: read-agent ask "..."')
    now = parse_now(args.now, "--now")

    async def main() -> Answer:
        await pool.start()
        try:
            async with pool.agent() as agent:
                return await agent.ask(question, now=now)
        finally:
            await pool.stop()

    answer = anyio.run(main)
    if args.json:
        print_json(answer.as_dict())
    else:
        print_answer(answer, sys.stdout)
    return 0


def print_answer(answer: Answer, out: TextIO) -> None:
    out.write(answer.text.rstrip() + "\n")
    if answer.citations:
        out.write("\nSources:\n")
        print_cited_pages(answer.citations, out)
    if answer.removed_citations:
        removed = ", ".join(answer.removed_citations)
        print(f"read-agent: removed citations no tool returned: {removed}", file=sys.stderr)
    if answer.degraded:
        print(f"read-agent: degraded: {', '.join(answer.degraded)}", file=sys.stderr)
    out.flush()


def print_cited_pages(pages: Sequence[CitedPage], out: TextIO) -> None:
    for page in pages:
        date = f" ({page.date})" if page.date else ""
        out.write(f"  [{page.id}] {page.title or page.id}{date}\n")


# -- chat --------------------------------------------------------------------------------------


def run_chat(args: argparse.Namespace) -> int:
    pool = make_pool(args)
    now = parse_now(args.now, "--now")
    stdin, stdout = sys.stdin, sys.stdout
    interactive = stdin.isatty()

    async def main() -> None:
        await pool.start()
        try:
            async with pool.agent() as agent:
                history: list[Turn] = []
                known: dict[str, CitedPage] = {}
                last: Answer | None = None
                if interactive:
                    stdout.write(f"Ask the knowledge base. {CHAT_HELP}.\n")
                while True:
                    if interactive:
                        stdout.write("> ")
                        stdout.flush()
                    line = await anyio.to_thread.run_sync(stdin.readline)
                    if not line:
                        break
                    text = line.strip()
                    if not text:
                        continue
                    if text in ("/quit", "/exit", "/q"):
                        break
                    if text == "/reset":
                        history, known, last = [], {}, None
                        stdout.write("(conversation reset)\n")
                    elif text == "/sources":
                        if last is None or not last.citations:
                            stdout.write("(no sources yet)\n")
                        else:
                            print_cited_pages(last.citations, stdout)
                    elif text in ("/help", "/?"):
                        stdout.write(CHAT_HELP + "\n")
                    elif text.startswith("/"):
                        stdout.write(f"unknown command {text}; {CHAT_HELP}\n")
                    else:
                        last = await agent.ask(text, history=history, now=now, known=known)
                        history += [Turn("user", text), Turn("assistant", last.text)]
                        known.update({c.id: c for c in last.citations})
                        print_answer(last, stdout)
                    stdout.write("\n")
                    stdout.flush()
        finally:
            await pool.stop()

    anyio.run(main)
    return 0


# -- serve -------------------------------------------------------------------------------------


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from memserver.web.addr import parse_addr
    from memserver.web.guard import HostRules, is_loopback
    from memserver.web.serve import server_config
    from read_agent.serve.app import create_app

    host, port = parse_addr(args.addr)
    api_key = env_api_key(args.api_key_env)
    if api_key is None and not is_loopback(host):
        raise UserError(
            f"refusing to serve on {args.addr} without an API key: anyone who can reach "
            "that address could read the knowledge base",
            f"set {args.api_key_env} to a secret clients must send as a Bearer token, "
            "or listen on 127.0.0.1",
        )
    pool = make_pool(args)
    hosts = HostRules.for_address(host, port, extra_origins=args.allow_origin)
    app = create_app(pool, api_key=api_key, model_id=args.model_id, hosts=hosts)
    config = server_config(app, host=host, port=port)
    logging.getLogger(__name__).warning(
        "read agent on http://%s:%d (memory: %s)", host, port, pool.target.description
    )
    # uvicorn re-raises the signal that stopped it; a no-op handler makes that exit 0.
    stops = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda signum, frame: None) for sig in stops}
    try:
        server = uvicorn.Server(config)
        server.run(sockets=[socket.socket(fileno=args.fd)] if args.fd is not None else None)
        if not server.started:
            raise UserError(
                f"the read agent could not start on {args.addr}",
                "see the log above: the memory server may have refused the token, or the "
                "port is taken",
            )
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    return run_translating_errors("read-agent", lambda: _run_command(args))


def _run_command(args: argparse.Namespace) -> int:
    """The subcommand, with errors from the MCP session's task groups unwrapped."""
    try:
        result: int = args.func(args)
        return result
    except BaseExceptionGroup as group:
        raise unwrap(group) from group
    finally:
        pool: AgentPool | None = getattr(args, "pool", None)
        if pool is not None:
            pool.close()


if __name__ == "__main__":
    sys.exit(main())
