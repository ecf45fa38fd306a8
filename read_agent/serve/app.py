"""The read agent over HTTP: ``POST /ask`` and an OpenAI-compatible chat endpoint.

Routes (``create_app``):

- ``POST /ask`` ``{"question", "now"?}`` -> the answer JSON (as ``read-agent ask --json``);
- ``POST /v1/chat/completions`` with ``stream: false`` (a ``chat.completion``) or
  ``stream: true`` (``chat.completion.chunk`` server-sent events ending with
  ``data: [DONE]``); any ``model`` name is accepted;
- ``GET /v1/models`` (one model, ``memory``) and ``GET /healthz``.

Client-supplied ``system``, ``developer`` and ``tool`` messages (and assistant tool
calls) are dropped before the model sees the conversation: the agent's own system
prompt is the only one. Earlier user and assistant turns are kept. Errors are
OpenAI-shaped: ``{"error": {"message", "type", "code", "param"}}``.

Every request passes :class:`memserver.web.guard.HttpGuard` first: a Host and Origin
of ours (421/403), the API key when one is set (every route but ``/healthz``; 401),
JSON bodies only (415) of at most ``MAX_BODY_BYTES`` (413), read within a deadline
(408). A body that is not JSON, of any shape or depth, is a 400.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from memserver import __version__
from memserver.errors import MemoryError_, ServerAuthError, ToolCallError, UserError
from memserver.timeparse.now import parse_now
from memserver.web.guard import GuardRules, HostRules, HttpGuard, openai_error
from read_agent.agent import Answer, Turn
from read_agent.connection import AgentPool, unwrap
from read_agent.errors import BadRequestError, MemoryUnavailableError

logger = logging.getLogger(__name__)

MODEL_ID = "memory"
MAX_HISTORY_TURNS = 20
MAX_QUESTION_CHARS = 8_000
MAX_BODY_BYTES = 512 * 1024
HEALTH_PING_SECONDS = 5.0  # /healthz waits this long for the memory server's answer
STREAM_PIECE_CHARS = 24
DROPPED_ROLES = frozenset({"system", "developer", "tool", "function"})


@dataclass(frozen=True)
class ChatRequest:
    """What the agent takes from a chat completion request."""

    question: str
    history: tuple[Turn, ...]
    model: str
    stream: bool
    include_usage: bool
    now: dt.datetime | None


# -- request parsing -------------------------------------------------------------------------


def request_now(value: Any, param: str = "now") -> dt.datetime | None:
    """The request's ``now`` (see ``memserver.timeparse.now``), or a 400 naming ``param``."""
    try:
        return parse_now(value, param)
    except UserError as exc:
        raise BadRequestError(exc.message, exc.hint, param=param) from None


def not_unicode(value: Any, where: str = "body") -> str | None:
    """Where in a parsed JSON value a string holds a lone surrogate ("\\udc80" is valid
    JSON but no Unicode text: it cannot be encoded to reach the memory server or a
    model), e.g. ``messages[0].content``; None when every string is text."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = not_unicode(key, where) or not_unicode(
                item, str(key) if where == "body" else f"{where}.{key}"
            )
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = not_unicode(item, f"{where}[{i}]")
            if found is not None:
                return found
    return None


def message_text(content: Any, where: str) -> str:
    """The text of a message: a string, or the ``text`` parts of a content list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and part.get("type") in ("text", "input_text"):
                parts.append(str(part.get("text") or ""))
        return "\n".join(p for p in parts if p)
    raise BadRequestError(f"{where}.content must be a string or a list of parts", param=where)


def parse_chat_request(body: Any) -> ChatRequest:
    """Validate a chat completion body; drop system/tool messages; split off the question."""
    if not isinstance(body, Mapping):
        raise BadRequestError("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequestError("messages must be a non-empty list", param="messages")
    turns: list[Turn] = []
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise BadRequestError(f"{where} must be an object with a role", param=where)
        role = message["role"]
        if role in DROPPED_ROLES:
            continue  # only the agent's own system prompt reaches the model
        if role not in ("user", "assistant"):
            raise BadRequestError(f"{where}.role {role!r} is not supported", param=where)
        text = message_text(message.get("content"), where).strip()
        if text:
            turns.append(Turn(role, text))
    if not turns or turns[-1].role != "user":
        raise BadRequestError("the conversation must end with a user message", param="messages")
    question = turns[-1].content
    if len(question) > MAX_QUESTION_CHARS:
        raise BadRequestError(
            f"the question is longer than {MAX_QUESTION_CHARS} characters", param="messages"
        )
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequestError("stream must be true or false", param="stream")
    options = body.get("stream_options") or {}
    model = body.get("model") or MODEL_ID
    return ChatRequest(
        question=question,
        # Earlier turns reach the model too: each is capped like the question.
        history=tuple(
            Turn(t.role, t.content[:MAX_QUESTION_CHARS]) for t in turns[:-1][-MAX_HISTORY_TURNS:]
        ),
        model=str(model),
        stream=stream,
        include_usage=bool(isinstance(options, Mapping) and options.get("include_usage")),
        now=request_now(body.get("now")),
    )


# -- responses -------------------------------------------------------------------------------


def error_body(
    message: str, type_: str, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code, "param": param}}


def error_response(exc: BaseException) -> JSONResponse:
    """An OpenAI-shaped error for anything raised while handling a request."""
    if isinstance(exc, BadRequestError):
        body, status = error_body(str(exc), "invalid_request_error", None, exc.param), 400
    elif isinstance(exc, ServerAuthError):
        body, status = error_body(str(exc), "api_error", "memory_server_auth"), 502
    elif isinstance(exc, ToolCallError):
        body, status = error_body(str(exc), "api_error", "memory_server_error"), 502
    elif isinstance(exc, MemoryUnavailableError):
        body, status = error_body(str(exc), "api_error", "memory_unavailable"), 503
    elif isinstance(exc, UserError):
        body, status = error_body(str(exc), "invalid_request_error"), 400
    elif isinstance(exc, MemoryError_):
        body, status = error_body(str(exc), "api_error", "memory_server_error"), 502
    else:
        body, status = error_body("internal error in the read agent", "server_error"), 500
    return JSONResponse(body, status_code=status)


def completion_content(answer: Answer) -> str:
    """The answer text with a sources list (titles and dates) for chat UIs."""
    if not answer.citations:
        return answer.text
    lines = [
        f"- [{c.id}] {c.title or c.id}" + (f" ({c.date})" if c.date else "")
        for c in answer.citations
    ]
    return answer.text + "\n\nSources:\n" + "\n".join(lines)


def _usage(answer: Answer) -> dict[str, int]:
    prompt = int(answer.usage.get("prompt_tokens", 0))
    done = int(answer.usage.get("completion_tokens", 0))
    return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}


def _memory_extension(answer: Answer) -> dict[str, Any]:
    """The answer as objects beside the chat message: its text without the sources list
    the message adds for chat UIs (``answer``), citations, lead and lines, mode."""
    data = answer.as_dict()
    data.pop("question")
    return data


def completion(answer: Answer, model: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": completion_content(answer)},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(answer),
        "memory": _memory_extension(answer),
    }


def _pieces(text: str, size: int = STREAM_PIECE_CHARS) -> Iterator[str]:
    """Pieces of about ``size`` characters, cut after whitespace where possible."""
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + 1, end + 1)
            if space > start:
                end = space + 1
        yield text[start:end]
        start = end


def completion_chunks(answer: Answer, request: ChatRequest) -> Iterator[bytes]:
    """The answer as ``chat.completion.chunk`` events, ending with ``data: [DONE]``."""
    ident, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())

    def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        payload = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": request.model,
            "choices": choices,
            **extra,
        }
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()

    def delta(value: dict[str, Any], finish: str | None = None) -> bytes:
        return event([{"index": 0, "delta": value, "finish_reason": finish}])

    yield delta({"role": "assistant", "content": ""})
    for piece in _pieces(completion_content(answer)):
        yield delta({"content": piece})
    yield event(
        [{"index": 0, "delta": {}, "finish_reason": "stop"}], memory=_memory_extension(answer)
    )
    if request.include_usage:
        yield event([], usage=_usage(answer))
    yield b"data: [DONE]\n\n"


# -- the app ---------------------------------------------------------------------------------


def create_app(
    pool: AgentPool,
    *,
    api_key: str | None = None,
    model_id: str = MODEL_ID,
    hosts: HostRules | None = None,
) -> ASGIApp:
    """The app serving ``pool``'s agents behind the HTTP guard (see the module docstring).

    ``hosts`` are the Host/Origin rules of the address it listens on (default: loopback
    on any port); ``api_key`` None means no key is asked for.
    """

    async def json_body(request: Request) -> Any:
        try:
            body = await request.json()
        except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            raise BadRequestError(
                "the request body is not valid JSON", "send one JSON object"
            ) from None
        where = not_unicode(body)
        if where is not None:
            raise BadRequestError(
                f"{where} is not valid Unicode text (it holds a lone surrogate, such as \\udc80)",
                "send text that encodes as UTF-8",
                param=where,
            )
        return body

    async def answer(
        question: str, history: tuple[Turn, ...] = (), now: dt.datetime | None = None
    ) -> Answer:
        async with pool.agent() as agent:
            return await agent.ask(question, history=history, now=now)

    async def ask(request: Request) -> Response:
        body = await json_body(request)
        if not isinstance(body, Mapping):
            raise BadRequestError("the request body must be a JSON object")
        question = body.get("question")
        if not isinstance(question, str) or not question.strip():
            raise BadRequestError("question must be a non-empty string", param="question")
        if len(question) > MAX_QUESTION_CHARS:
            raise BadRequestError(
                f"question is longer than {MAX_QUESTION_CHARS} characters", param="question"
            )
        result = await answer(question.strip(), now=request_now(body.get("now")))
        return JSONResponse(result.as_dict())

    async def chat_completions(request: Request) -> Response:
        chat = parse_chat_request(await json_body(request))
        result = await answer(chat.question, chat.history, chat.now)
        if not chat.stream:
            return JSONResponse(completion(result, chat.model))
        return StreamingResponse(
            iter(list(completion_chunks(result, chat))),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def models(request: Request) -> Response:
        entry = {"id": model_id, "object": "model", "created": 0, "owned_by": "memory-system"}
        return JSONResponse({"object": "list", "data": [entry]})

    async def healthz(request: Request) -> Response:
        """Up, and whether the memory server answers on a pooled session (it lists the
        token's tools and one page, so a memory whose database does not answer is 503
        too; a broken session is dropped and the next request opens a new one)."""
        problem = None
        try:
            # Shielded: a prober that hangs up must not cancel a lent session half-way.
            with anyio.CancelScope(shield=True), anyio.fail_after(HEALTH_PING_SECONDS):
                async with pool.agent() as agent:
                    tools = await agent.memory.list_tools()
                    if any(t.name == "kb_list_pages" for t in tools):
                        await agent.memory.call("kb_list_pages", {"limit": 1})
        except Exception as exc:  # any failure to reach it is what this reports
            problem = f"{type(unwrap(exc)).__name__}: {unwrap(exc)}"[:300]
        return JSONResponse(
            {
                "status": "ok" if problem is None else "memory_unreachable",
                "version": __version__,
                "llm": pool.llm is not None,
                "memory": pool.target.description,
                "memory_connected": problem is None,
                **({"memory_error": problem} if problem is not None else {}),
            },
            status_code=200 if problem is None else 503,
        )

    async def on_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, HTTPException):
            code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code)
            body = error_body(str(exc.detail), "invalid_request_error", code)
            return JSONResponse(body, status_code=exc.status_code)
        if not isinstance(exc, MemoryError_):
            logger.error("request %s failed", request.url.path, exc_info=exc)
        return error_response(exc)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await pool.start()
        try:
            yield
        finally:
            await pool.stop()

    app = Starlette(
        routes=[
            Route("/ask", ask, methods=["POST"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/models", models, methods=["GET"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        # MemoryError_ is handled inside the app; only unexpected errors reach Exception.
        exception_handlers={HTTPException: on_error, MemoryError_: on_error, Exception: on_error},
        lifespan=lifespan,
    )
    rules = GuardRules(
        hosts=hosts or HostRules.loopback(),
        api_key=api_key,
        key_hint="send Authorization: Bearer <key> (the key in READ_AGENT_API_KEY)",
        max_body=MAX_BODY_BYTES,
    )
    return HttpGuard(app, rules, error_body=openai_error)
