"""``memserver up``: the whole system on one knowledge base, from one command.

What runs, in this order (each step bounded in time)::

    embedded PostgreSQL (or DATABASE_URL) -> migrate -> check the embedding model
    -> background embedder (new texts are keyword-searchable at once, vectors follow)
    -> reindex knowledge/ and source/ (only what changed)
    -> tokens: "up-ingest" (folders *, write) and "up-read" (folders *, read-only)
    -> memory server, in this process: MCP over HTTP at http://ADDR/mcp (+ /healthz),
       and the web console at http://ADDR/ui (the banner's login link signs in as admin)
    -> read agent:   subprocess ``read-agent serve --addr AGENT_ADDR --fd N`` (/healthz)
    -> ingest agent: subprocess ``ingest-agent --url .../mcp --watch 60s`` (nice +10: questions
       come first)

After the banner, ``up`` shows the ingest agent's progress (``memserver.up.progress``):
a bar and one line per finished note on a terminal, the lines alone otherwise, JSON
lines with ``--json``.

Both ports are listened on before anything starts (a port in use is one clear error);
the read agent is handed its listening socket (``--fd``) and an API key
(``READ_AGENT_API_KEY`` when set, else ``<kb>/.memserver/tokens/read-agent.key``),
printed in the banner and used in every snippet it prints. The agents reach the
memory server only over MCP, with ``MEMORY_URL`` and their token in the environment (``MEMORY_TOKEN``, or the variable ``mcp.token_env`` names). Token
secrets live in ``<kb>/.memserver/tokens/<name>.token`` (directory 0700, files 0600) and
are reused on the next start while the token store still accepts them; a revoked or
lost token is replaced. Logs: ``<kb>/.memserver/logs/`` (``memserver.log`` for this
process, ``read-agent.log`` and ``ingest-agent.log`` for the children).

If the embedded PostgreSQL stops on its own meanwhile, ``up`` says so and starts it
again (every few seconds until it runs); the memory server's calls fail fast with
"database unavailable, retrying" until then, and the first call after succeeds.

Stopping: SIGINT (Ctrl-C), SIGTERM or SIGHUP stops the agents (SIGINT, then SIGKILL
after ``stop_timeout``), then the memory server, then releases the embedded PostgreSQL
(the last process of the knowledge base stops it); exit status 0. A child that exits on
its own is reported with the tail of its log and everything else is stopped; exit
status 1. The children run in their own process group (Ctrl-C reaches only this
process, which stops them in order) and, on Linux, get SIGTERM if this process dies.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import secrets
import shlex
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType, MappingProxyType
from typing import IO, TYPE_CHECKING

from memserver.console.agent_link import ReadAgentLink
from memserver.console.period import Period, notes_period
from memserver.errors import ServiceError, StoreError, UserError
from memserver.kb.layout import KBPaths
from memserver.terminal.progress import NoteProgress
from memserver.up.agent_key import KEY_ENV
from memserver.up.progress import UpProgress
from memserver.up.server_thread import MemoryServerThread
from memserver.up.supervise import (
    Child,
    listen_socket,
    log_to_file,
    port_error,
    url_of,
    wait_healthy,
)
from memserver.up.tokens import INGEST_TOKEN, READ_TOKEN, UpTokens, ensure_tokens

if TYPE_CHECKING:
    from memserver.clients.config import Settings
    from memserver.store.knowledge_base import KnowledgeBase

logger = logging.getLogger(__name__)

DEFAULT_ADDR = "127.0.0.1:8787"
DEFAULT_AGENT_ADDR = "127.0.0.1:8788"
DEFAULT_WATCH = "60s"
HEALTH_TIMEOUT = 120.0
STOP_TIMEOUT = 10.0
DB_RETRY_SECONDS = 5.0
EXAMPLE_QUESTION = "When was the latest meeting with Globex, and what was decided?"
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True)
class UpOptions:
    """What ``memserver up`` was asked to run."""

    kb: Path
    config: str | None = None
    addr: str = DEFAULT_ADDR
    agent_addr: str = DEFAULT_AGENT_ADDR
    watch: str = DEFAULT_WATCH
    ingest: bool = True
    embedder: str | None = None  # "local" or "hash"; None = as configured
    json_lines: bool = False  # progress and the banner as JSON lines
    health_timeout: float = HEALTH_TIMEOUT
    stop_timeout: float = STOP_TIMEOUT


def logs_dir(paths: KBPaths) -> Path:
    return paths.state / "logs"


# -- helpers -------------------------------------------------------------------------------------


def with_embedder(settings: Settings, provider: str | None) -> Settings:
    """``settings`` with the embedding provider replaced (``--embedder``)."""
    if provider is None or provider == settings.embedding.options.get("provider"):
        return settings
    options = {**settings.embedding.options, "provider": provider, "dims": None}
    embedding = replace(settings.embedding, options=MappingProxyType(options))
    return replace(settings, embedding=embedding)


# -- the whole system ---------------------------------------------------------------------------


class Up:
    """Starts, watches and stops everything (see the module docstring)."""

    def __init__(self, options: UpOptions, out: IO[str] | None = None) -> None:
        self.options = options
        self.paths = KBPaths.of(options.kb.resolve())
        self.out = out or sys.stdout
        self.kb: KnowledgeBase | None = None
        self.settings: Settings | None = None
        self.tokens: UpTokens | None = None
        self.reindex_failed = 0
        self.embedder_overridden = False
        self.memory: MemoryServerThread | None = None
        self.progress: UpProgress | None = None
        self.children: list[Child] = []
        self._signal: int | None = None
        self._starting = True
        # The console's trusted login link (printed in the banner), valid while we run.
        self.login_key = secrets.token_urlsafe(24)
        self._wake = threading.Event()
        self._next_db_check = 0.0

    # ---------------------------------------------------------------- running

    def run(self) -> int:
        """Start everything, wait for a stop signal or a failure, stop everything."""
        previous = {sig: signal.signal(sig, self._on_signal) for sig in _STOP_SIGNALS}
        try:
            try:
                self._start()
                self._starting = False
                # Only now: a Ctrl-C right after the banner is a normal stop, not an abort.
                self.say_banner()
                return self._watch()
            except KeyboardInterrupt:
                self.say("\ninterrupted while starting; stopping")
                return 130
            finally:
                self._starting = False
                self._shutdown()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # Only a plain assignment here: the main thread may hold any lock right now.
        self._signal = signum
        if self._starting:
            raise KeyboardInterrupt

    def say(self, text: str) -> None:
        if self.options.json_lines:
            text = json.dumps({"event": "status", "message": text.strip()}, ensure_ascii=False)
        self.out.write(text + "\n")
        self.out.flush()

    def _start(self) -> None:
        from memserver.clients.config import load_settings
        from memserver.server.tokens import TokenStore
        from memserver.store.knowledge_base import KnowledgeBase

        opts = self.options
        configured = load_settings(opts.config)
        settings = with_embedder(configured, opts.embedder)
        self.settings = settings
        self.embedder_overridden = settings is not configured
        sock = listen_socket(opts.addr, "memory server", "--addr")
        agent_sock: socket.socket | None = None
        try:
            agent_sock = listen_socket(opts.agent_addr, "read agent", "--agent-addr")
            where = "DATABASE_URL" if settings.database_url else "the embedded PostgreSQL"
            self.say(f"starting {where}, migrating, loading the embedder ...")
            self.kb = KnowledgeBase.open(self.paths.root, settings)
            self.kb.start_background_embedding()  # the reindex below leaves new texts to it
            self.say("indexing what changed in knowledge/ and source/ ...")
            report = self.kb.reindex()
            self.reindex_failed = len(report.failed)
            tokens = self.tokens = ensure_tokens(self.paths, TokenStore(self.kb.db))
            # The console's Ask view reaches the read agent started below, with its key.
            link = ReadAgentLink(url_of(opts.agent_addr), tokens.agent_key)
            self.memory = MemoryServerThread(
                self.kb,
                settings,
                sock,
                opts.addr,
                self._wake.set,
                login_key=self.login_key,
                read_agent=link,
            )
        except BaseException:
            sock.close()
            if agent_sock is not None:
                agent_sock.close()
            raise
        self.memory.start()
        display = NoteProgress(self.out, json_lines=opts.json_lines)
        # Listening from now on; the lines are drawn after the banner (``_watch``).
        self.progress = UpProgress(
            self.memory.services.ingest,
            display,
            self.kb.embedding_pending,
            self.kb.embedding_counts,
        )
        self.say(f"memory server on {self.mcp_url} ...")
        wait_healthy(
            f"{url_of(opts.addr)}/healthz",
            opts.health_timeout,
            alive=lambda: self.memory is not None and self.memory.running,
            failure=self._memory_failure,
            what="memory server",
        )
        # The read agent serves on the socket listening since the start (no port race).
        with agent_sock:
            fd = agent_sock.fileno()
            argv = [*self._config_args(), "serve", "--addr", opts.agent_addr, "--fd", str(fd)]
            reader = self._child(
                "read agent",
                ["read_agent.cli", *argv],
                tokens.read,
                {KEY_ENV: tokens.agent_key},
                pass_fds=(fd,),
            )
        self.say(f"read agent on {url_of(opts.agent_addr)} ...")
        self._wait_child(reader, f"{url_of(opts.agent_addr)}/healthz")
        if opts.ingest:
            argv = ["ingest_agent.cli", *self._config_args(), "--url", self.mcp_url]
            self._child("ingest agent", [*argv, "--watch", opts.watch], tokens.ingest, nice=10)

    def _memory_failure(self) -> Exception:
        error = self.memory.error if self.memory is not None else None
        if isinstance(error, OSError) and error.errno == errno.EADDRINUSE:
            return port_error(self.options.addr, "memory server", "--addr", error)
        return ServiceError(
            f"the memory server stopped while starting: {error}",
            f"see {logs_dir(self.paths) / 'memserver.log'}",
        )

    def _config_args(self) -> list[str]:
        return ["--config", str(Path(self.options.config).resolve())] if self.options.config else []

    def _child(
        self,
        name: str,
        module_args: list[str],
        token: str,
        extra_env: dict[str, str] | None = None,
        pass_fds: tuple[int, ...] = (),
        nice: int = 0,
    ) -> Child:
        assert self.settings is not None
        env = dict(os.environ)
        env["MEMORY_URL"] = self.mcp_url
        env[str(self.settings.mcp.options.get("token_env", "MEMORY_TOKEN"))] = token
        env["PYTHONUNBUFFERED"] = "1"
        env.update(extra_env or {})
        log = logs_dir(self.paths) / f"{name.replace(' ', '-')}.log"
        argv = [sys.executable, "-m", *module_args]
        child = Child(name, argv, env, log, on_exit=self._wake.set, pass_fds=pass_fds, nice=nice)
        self.children.append(child)
        child.start()
        return child

    def _wait_child(self, child: Child, health_url: str) -> None:
        wait_healthy(
            health_url,
            self.options.health_timeout,
            alive=lambda: child.exit_code() is None,
            failure=lambda: child.failure(" while starting"),
            what=child.name,
        )

    def _watch(self) -> int:
        """Until a stop signal (exit 0) or a service that ends by itself (exit 1)."""
        while self._signal is None:
            self._wake.wait(0.5)
            self._wake.clear()
            if self._signal is not None:
                break
            if self.progress is not None:
                self.progress.poll()
            for child in self.children:
                if child.exit_code() is not None:
                    raise child.failure()
            self._keep_database_up()
            if self.memory is not None and not self.memory.running:
                raise ServiceError(
                    f"the memory server stopped: {self.memory.error or 'no error recorded'}",
                    f"see {logs_dir(self.paths) / 'memserver.log'}",
                )
        name = signal.Signals(self._signal).name
        embedded = self.settings is not None and not self.settings.database_url
        database = " and the embedded PostgreSQL" if embedded else ""
        self.say(f"\n{name}: stopping the agents, the memory server{database} ...")
        return 0

    def _keep_database_up(self) -> None:
        """Restart the embedded PostgreSQL if it stopped on its own (tried every few seconds)."""
        server = self.kb.db.server if self.kb is not None else None
        now = time.monotonic()
        if server is None or now < self._next_db_check or server.running():
            return
        self._next_db_check = now + DB_RETRY_SECONDS
        self.say("the embedded PostgreSQL stopped; restarting it ...")
        try:
            server.restart()
        except StoreError as exc:
            self.say(f"{exc.message}; trying again in {DB_RETRY_SECONDS:.0f} s")
            return
        self.say("the embedded PostgreSQL is running again")

    def _shutdown(self) -> None:
        if self.progress is not None:
            self.progress.close()
        timeout = self.options.stop_timeout
        for child in self.children:  # all asked at once, then waited for
            child.request_stop()
        for child in self.children:
            child.wait(timeout)
        if self.memory is not None:
            self.memory.stop(timeout)
        if self.kb is not None:
            self.kb.close()  # releases the embedded PostgreSQL (stopped if we were last)
        if self._signal is not None:
            self.say("stopped.")

    # ---------------------------------------------------------------- the banner

    def say_banner(self) -> None:
        """The banner (one JSON object with ``--json``); ingest progress follows it."""
        if self.options.json_lines:
            self.out.write(json.dumps(self.banner_fields(), ensure_ascii=False) + "\n")
            self.out.flush()
        else:
            self.say(self.banner())

    @property
    def mcp_url(self) -> str:
        return f"{url_of(self.options.addr)}/mcp"

    @property
    def console_url(self) -> str:
        """The console's login link: a trusted session while this process runs."""
        return f"{url_of(self.options.addr)}/ui/login?key={self.login_key}"

    def banner(self) -> str:
        opts, settings, tokens, kb = self.options, self.settings, self.tokens, self.kb
        assert settings is not None and tokens is not None and kb is not None
        state = self.paths.state
        agent = url_of(opts.agent_addr)
        read_file = tokens.file(READ_TOKEN)
        if settings.llm is None:
            model = (
                "none: the ingest agent uses the rules extractor and the read agent "
                "answers with extracts of the search results\n"
                + " " * 18
                + "(set LLM_BASE_URL, LLM_MODEL and LLM_API_KEY, then run again, to use a model)"
            )
        else:
            model = f"{settings.llm.model} at {settings.llm.base_url} (extraction and answers)"
        database = (
            "DATABASE_URL" if settings.database_url else f"embedded PostgreSQL ({state / 'pg'})"
        )
        ingest = (
            f"watching {self.paths.source} every {opts.watch} (progress below)"
            if opts.ingest
            else "off (--no-ingest)"
        )
        question = json.dumps({"question": EXAMPLE_QUESTION}, ensure_ascii=False)
        reader_env = f"MEMORY_URL={self.mcp_url} MEMORY_TOKEN=$(cat {shlex.quote(str(read_file))})"
        key = tokens.agent_key
        period = notes_period(kb.db)
        warn = (
            f"\n  warning: {self.reindex_failed} page(s) in knowledge/ do not fit the schema and "
            "were not indexed; run `memserver reindex` to see why\n"
            if self.reindex_failed
            else ""
        )
        return f"""
Memory System is up: {self.paths.root}

  memory server   {self.mcp_url}  (MCP, bearer tokens; health: {url_of(opts.addr)}/healthz)
  web console     {self.console_url}
                  (this link signs you in as admin while `up` runs; or sign in with a token)
  read agent      {agent}  (POST /ask, OpenAI-compatible /v1/chat/completions; API key below)
  ingest agent    {ingest}
  database        {database}
  embedder        {kb.embedder.name}
  model           {model}
  tokens          {tokens.directory}/ ({INGEST_TOKEN}: write, {READ_TOKEN}: read-only)
  logs            {logs_dir(self.paths)}/ ({", ".join(self.log_names())})
{warn}{notes_banner(period)}
Ask a question:
  curl -s {agent}/ask -H 'Authorization: Bearer {key}' \\
       -H 'Content-Type: application/json' -d {shlex.quote(question)}
  {reader_env} \\
       {script("read-agent")} ask {shlex.quote(EXAMPLE_QUESTION)}

MCP clients (the read token; keep it private):
{self.mcp_snippets(tokens.read)}

Chat UI (Open WebUI, LibreChat, any OpenAI-compatible client):
  base URL {agent}/v1, API key {key}, any model name (listed as "memory")

Press Ctrl-C to stop everything.
"""

    def banner_fields(self) -> dict[str, object]:
        """What the banner says, for ``--json`` (secrets stay in the token files)."""
        assert self.tokens is not None and self.kb is not None
        period = notes_period(self.kb.db)
        return {
            "event": "up",
            "notes": {"first": period.first.isoformat(), "last": period.as_of} if period else None,
            "kb": str(self.paths.root),
            "mcp_url": self.mcp_url,
            "read_agent_url": url_of(self.options.agent_addr),
            "ingest": self.options.ingest,
            "embedder": self.kb.embedder.name,
            "tokens": str(self.tokens.directory),
            "logs": str(logs_dir(self.paths)),
        }

    def log_names(self) -> list[str]:
        return ["memserver.log", *(child.log.name for child in self.children)]

    def mcp_snippets(self, token: str) -> str:
        """Client configuration for Claude Code (HTTP) and Claude Desktop (stdio)."""
        code = {
            "type": "http",
            "url": self.mcp_url,
            "headers": {"Authorization": f"Bearer {token}"},
        }
        text = "  Claude Code (.mcp.json), or any client that speaks Streamable HTTP:\n"
        text += _indent(json.dumps({"mcpServers": {"memory": code}}, indent=2), 4) + "\n"
        if self.embedder_overridden:
            return text + (
                "  Claude Desktop starts its own stdio server, which uses the configured "
                "embedder, not --embedder; run `up` without --embedder for its snippet."
            )
        args = ["--kb", str(self.paths.root)]
        if self.options.config:
            args += ["--config", str(Path(self.options.config).resolve())]
        env = {"MEMORY_TOKEN": token}
        if os.environ.get("DATABASE_URL"):
            env["DATABASE_URL"] = os.environ["DATABASE_URL"]
        desktop = {"command": script("memserver"), "args": [*args, "serve", "--stdio"], "env": env}
        text += "  Claude Desktop (claude_desktop_config.json; it starts a stdio server itself):\n"
        return text + _indent(json.dumps({"mcpServers": {"memory": desktop}}, indent=2), 4)


def notes_banner(period: Period | None) -> str:
    """Which period the notes cover, and how to ask as of it: "last week" is counted from
    the reference time, which is today unless set (the example's notes end in 2026-11)."""
    if period is None:
        return ""
    end = period.as_of
    return f"""
The notes in source/ run from {period.first.isoformat()} to {end}. "Last week" counts back from today,
so to ask as of the notes, set the reference time to {end}: "Reference time" in the
console's Ask view, "now": "{end}" in /ask and /v1/chat/completions, or --now {end}
for read-agent ask. Or name the period: "What happened in {period.month}?"
"""


def script(name: str) -> str:
    """The full path of one of our console scripts next to this interpreter, if there."""
    path = Path(sys.executable).with_name(name)
    return str(path) if path.is_file() else name


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line for line in text.splitlines())


def run_up(options: UpOptions, out: IO[str] | None = None, *, verbose: bool = False) -> int:
    """Run ``memserver up`` until stopped; the exit status (0 after a stop signal)."""
    up = Up(options, out)
    if not up.paths.schema.is_file():
        raise UserError(
            f"no schema.yaml in {up.paths.root}",
            "pass --kb with a knowledge base directory (e.g. --kb example_kb)",
        )
    with log_to_file(logs_dir(up.paths) / "memserver.log", keep_console=verbose):
        try:
            return up.run()
        except ServiceError as exc:
            print(f"memserver up: {exc.message}", file=sys.stderr)
            if exc.hint:
                print(f"memserver up: {exc.hint}", file=sys.stderr)
            return 1
