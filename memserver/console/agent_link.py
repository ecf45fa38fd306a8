"""The console's way to the read agent: its address and key, and one question asked.

The Ask view does not answer by itself: it sends the conversation to the read agent's
OpenAI-compatible ``/v1/chat/completions`` (with the ``openai`` client) and shows what
comes back, so a person sees exactly the answer an API client or chat UI gets. The
answer's ``memory`` extension carries the citations (id, title, date), the mode, the
degraded reasons, the answer's text without the "Sources:" list the chat message ends
with for chat UIs (the console shows the citations as links instead) and, for an
extractive answer, its lead and lines as objects (:mod:`memserver.console.answer_lines`),
which the view renders. Nothing of the message's text is parsed here.

``memserver up`` knows the address and key of the read agent it starts; ``memserver
serve`` takes them from ``READ_AGENT_URL`` and ``READ_AGENT_API_KEY``.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memserver.clients import tls
from memserver.clients.config import EndpointSettings
from memserver.console.answer_lines import Line, read_line, read_lines

URL_ENV = "READ_AGENT_URL"
KEY_ENV = "READ_AGENT_API_KEY"
ANSWER_SECONDS = 180.0  # a model answering with several tool calls on a slow machine


class AgentUnavailable(Exception):
    """The read agent did not answer; ``message`` says why and ``hint`` what to do."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class Citation:
    id: str
    title: str
    date: str | None


@dataclass(frozen=True)
class Reply:
    """The read agent's answer to one question, as the Ask view shows it."""

    question: str
    text: str
    citations: tuple[Citation, ...]
    mode: str
    degraded: tuple[str, ...]
    now: str  # the reference time it was asked with ("" = the agent's clock)
    took_ms: float
    asked_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    # an extractive answer as objects (none for a model's answer): shown instead of text
    lead: Line | None = None
    lines: tuple[Line, ...] = ()
    window: str = ""
    notes: tuple[str, ...] = ()

    @property
    def structured(self) -> bool:
        return self.lead is not None or bool(self.lines)

    @property
    def titles(self) -> dict[str, str]:
        """The cited pages' titles by id: the ids an answer's lines show as links."""
        return {c.id: c.title for c in self.citations}


@dataclass(frozen=True)
class ReadAgentLink:
    """Where the read agent listens (``http://127.0.0.1:8788``) and the key it wants."""

    url: str
    api_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ReadAgentLink | None:
        """``READ_AGENT_URL`` (and ``READ_AGENT_API_KEY``), or None when unset."""
        values = os.environ if env is None else env
        url = values.get(URL_ENV, "").strip().rstrip("/")
        if not url:
            return None
        return cls(url, values.get(KEY_ENV, "").strip() or None)

    async def ask(self, question: str, history: Sequence[tuple[str, str]], now: str = "") -> Reply:
        """Ask ``question`` after the ``(question, answer)`` pairs of ``history``."""
        import openai  # here: it takes about a second to import, and only Ask needs it

        messages: list[dict[str, str]] = []
        for asked, answered in history:
            messages += [
                {"role": "user", "content": asked},
                {"role": "assistant", "content": answered},
            ]
        messages.append({"role": "user", "content": question})
        endpoint = EndpointSettings(name="read_agent", base_url=self.url, timeout=ANSWER_SECONDS)
        started = dt.datetime.now(dt.UTC)
        async with tls.async_http_client(endpoint) as http:
            client = openai.AsyncOpenAI(
                base_url=f"{self.url}/v1",
                api_key=self.api_key or "no-key",
                http_client=http,
                max_retries=0,
                timeout=ANSWER_SECONDS,
            )
            try:
                done = await client.chat.completions.create(
                    model="memory",
                    messages=messages,  # type: ignore[arg-type]
                    extra_body={"now": now} if now else None,
                )
            except openai.APIStatusError as exc:
                raise self._refused(exc) from None
            except openai.APIConnectionError as exc:
                raise AgentUnavailable(
                    f"the read agent at {self.url} does not answer ({exc.__cause__ or exc})",
                    "start it (`memserver up` starts one), or check READ_AGENT_URL",
                ) from None
        took = (dt.datetime.now(dt.UTC) - started).total_seconds() * 1000
        return _reply(question, done.to_dict(), now, took)

    def _refused(self, exc: Any) -> AgentUnavailable:
        message = _error_message(exc.body) or str(exc)
        if exc.status_code == 401:
            return AgentUnavailable(
                f"the read agent at {self.url} refused the console's key: {message}",
                "give the console the key the read agent was started with "
                "(READ_AGENT_API_KEY), or restart `memserver up`",
            )
        if exc.status_code == 400:
            return AgentUnavailable(
                f"the read agent could not take this question: {message}",
                "change the question or the reference time and ask again",
            )
        return AgentUnavailable(
            f"the read agent at {self.url} failed ({exc.status_code}): {message}",
            "see the read agent's log (read-agent.log under `memserver up`) and ask again",
        )


def _error_message(body: Any) -> str:
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            return str(inner.get("message") or "")
    return ""


def _reply(question: str, body: Mapping[str, Any], now: str, took_ms: float) -> Reply:
    """A chat completion (with its ``memory`` extension) as a Reply."""
    memory = body.get("memory") or {}
    citations = tuple(
        Citation(str(c.get("id")), str(c.get("title") or c.get("id")), c.get("date") or None)
        for c in memory.get("citations") or ()
        if isinstance(c, Mapping) and c.get("id")
    )
    choices = body.get("choices") or [{}]
    said = memory.get("answer")  # the text without the chat UI's sources list
    text = str(
        said if isinstance(said, str) else (choices[0].get("message") or {}).get("content") or ""
    )
    return Reply(
        question=question,
        text=text,
        citations=citations,
        mode=str(memory.get("mode") or ""),
        degraded=tuple(str(d) for d in memory.get("degraded") or ()),
        now=now,
        took_ms=round(took_ms),
        lead=read_line(memory.get("lead")),
        lines=read_lines(memory.get("lines")),
        window=str(memory.get("window") or ""),
        notes=tuple(str(n) for n in memory.get("notes") or () if isinstance(n, str)),
    )
