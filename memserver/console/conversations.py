"""The Ask view's conversations: one per console session, kept in this process's memory.

A conversation is the last ``MAX_EXCHANGES`` questions with their answers (sent back to
the read agent with each follow-up, so "and before that?" has its context) and the
reference time the person set. At most ``MAX_CONVERSATIONS`` are kept; the one used
least recently goes first. Like the sessions, they end when the server restarts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from memserver.console.agent_link import Reply

MAX_EXCHANGES = 10  # the read agent reads at most 20 earlier turns
MAX_CONVERSATIONS = 1000


@dataclass
class Conversation:
    exchanges: deque[Reply] = field(default_factory=lambda: deque(maxlen=MAX_EXCHANGES))
    now: str = ""  # the reference time questions are asked with ("" = the agent's clock)

    def history(self) -> list[tuple[str, str]]:
        return [(r.question, r.text) for r in self.exchanges]


class Conversations:
    """Conversations by session id (thread-safe)."""

    def __init__(self, limit: int = MAX_CONVERSATIONS) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._by_session: OrderedDict[str, Conversation] = OrderedDict()

    def of(self, session_id: str) -> Conversation:
        """The session's conversation (a new, empty one the first time)."""
        with self._lock:
            found = self._by_session.pop(session_id, None) or Conversation()
            self._by_session[session_id] = found
            while len(self._by_session) > self.limit:
                self._by_session.popitem(last=False)
            return found

    def add(self, session_id: str, reply: Reply) -> None:
        with self._lock:
            conversation = self._by_session.setdefault(session_id, Conversation())
            conversation.exchanges.append(reply)
            conversation.now = reply.now

    def clear(self, session_id: str) -> None:
        """A new conversation: the questions go, the reference time stays."""
        with self._lock:
            found = self._by_session.get(session_id)
            if found is not None:
                found.exchanges.clear()
