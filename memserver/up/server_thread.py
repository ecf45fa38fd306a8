"""The memory server of ``up``: MCP and the console over HTTP, served by uvicorn in a
thread of the ``up`` process (which holds the knowledge base and its embedder)."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from memserver.up.supervise import url_of
from memserver.web.addr import parse_addr

if TYPE_CHECKING:
    import uvicorn

    from memserver.clients.config import Settings
    from memserver.console.agent_link import ReadAgentLink
    from memserver.store.knowledge_base import KnowledgeBase

logger = logging.getLogger(__name__)


class MemoryServerThread:
    """The MCP memory server over HTTP, served by uvicorn in a thread of this process."""

    def __init__(
        self,
        kb: KnowledgeBase,
        settings: Settings,
        sock: socket.socket,
        addr: str,
        on_exit: Callable[[], None],
        login_key: str | None = None,
        read_agent: ReadAgentLink | None = None,
    ) -> None:
        import uvicorn

        from memserver.console.app import create_app
        from memserver.server.audit import AuditLog
        from memserver.server.mcp_server import build_server
        from memserver.server.tokens import TokenStore
        from memserver.server.tools.base import Services
        from memserver.web.serve import server_config

        host, port = parse_addr(addr)
        services = self.services = Services(paths=kb.paths, kb_opener=lambda: kb, settings=settings)
        server = build_server(
            services,
            tokens=TokenStore(kb.db),
            audit=AuditLog(kb.db),
            public_url=url_of(addr),
        )
        config = server_config(
            create_app(server, host=host, port=port, login_key=login_key, read_agent=read_agent),
            log_config=None,  # our handlers: <kb>/.memserver/logs/memserver.log
        )
        self.server: uvicorn.Server = uvicorn.Server(config)
        self.error: BaseException | None = None
        self._sock = sock
        self._on_exit = on_exit
        self._thread = threading.Thread(target=self._run, name="memserver-http", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            self.server.run(sockets=[self._sock])
        except BaseException as exc:  # SystemExit from a failed startup included
            self.error = exc
            logger.exception("the memory server stopped with an error")
        finally:
            self._on_exit()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float) -> None:
        self.server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        if self._thread.is_alive():
            self.server.force_exit = True
            self._thread.join(timeout)
