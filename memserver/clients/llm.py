"""The OpenAI-compatible LLM client shared by the server and both agents.

Built on the ``openai`` package with an ``httpx2`` client from ``memserver.clients.tls``, so any
provider that speaks the OpenAI wire format works by base URL (OpenAI, vLLM, Ollama,
LM Studio, OpenRouter, DeepSeek). What it adds on top:

- ``<think>...</think>`` blocks of reasoning models are stripped from answers;
- ``chat_json`` asks for JSON mode and, when a provider rejects ``response_format``,
  falls back to plain JSON-in-text (the first JSON object in the answer);
- ``chat_structured`` asks for output shaped by a JSON Schema (``response_format``
  ``json_schema``, which grammar-constrained local servers enforce), falls back to JSON
  mode when the provider rejects it, validates the answer against the schema either way
  and spends one repair round listing what is wrong (``LLMUnusable`` after);
- bounded retries with exponential backoff on 429, 5xx, timeouts and refused
  connections (``Retry-After`` honoured, capped), all inside one ``deadline`` per call
  when one is given (``LLMTimeout`` once it passes: callers fall back instead of
  waiting past their own caller's patience);
- errors name the integration and endpoint URL and say what to check;
- a per-run ``TokenBudget`` (``memserver.clients.budget``, re-exported here): a call that
  would start beyond the budget raises ``BudgetExceeded`` instead of spending.

The answer-text helpers live in :mod:`memserver.clients.llm_text`, the reranker in
:mod:`memserver.clients.rerank` and the HTTP failure helpers in :mod:`memserver.clients.endpoint_errors`;
their public names are re-exported here.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import httpx2

from memserver.clients import tls
from memserver.clients.budget import TokenBudget, estimate_tokens, usage_tokens
from memserver.clients.config import EndpointSettings
from memserver.clients.endpoint_errors import retry_after, root_message
from memserver.clients.llm_text import (
    ThinkFilter,
    extract_json_object,
    parse_arguments,
    schema_problems,
    strip_think,
)
from memserver.clients.rerank import Reranker
from memserver.errors import ConfigError, LLMError, LLMTimeout, LLMUnusable

if TYPE_CHECKING:
    import openai

__all__ = [
    "ChatResult",
    "LLMClient",
    "Reranker",
    "TokenBudget",
    "ToolCall",
    "estimate_tokens",
    "extract_json_object",
    "retry_after",
    "root_message",
    "strip_think",
    "usage_tokens",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
REJECTED_FORMAT = frozenset({400, 404, 415, 422, 501})  # a provider refusing response_format
MIN_ATTEMPT_SECONDS = 1.0  # an attempt with less time left than this is not started


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model.

    ``arguments`` is the parsed JSON object ({} when the model sent malformed JSON);
    ``raw_arguments`` is the string as sent, so an agent can tell the model what was
    wrong.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The OpenAI wire form, for the assistant message in the conversation."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.raw_arguments or "{}"},
        }


@dataclass(frozen=True)
class ChatResult:
    """A chat answer: text without ``<think>`` blocks, tool calls, and token usage."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Mapping[str, int] = field(default_factory=dict)
    finish_reason: str = ""

    def as_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation before tool results."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.as_dict() for call in self.tool_calls]
        return message


# ---------------------------------------------------------------------------- client


class LLMClient:
    """Chat completions against one OpenAI-compatible endpoint.

    ``max_attempts`` (default: 1 + ``llm.max_retries``) bounds every call; waits grow
    from ``backoff`` seconds, doubling, capped at ``max_backoff``. ``deadline`` (seconds)
    bounds one call, retries and repair rounds included: each attempt waits at most what
    is left of it. Tests pass small values. Not tied to a thread; the underlying
    ``openai`` client is thread-safe.
    """

    def __init__(
        self,
        endpoint: EndpointSettings,
        budget: TokenBudget | None = None,
        *,
        max_attempts: int | None = None,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        http_client: httpx2.Client | None = None,
        deadline: float | None = None,
    ) -> None:
        if not endpoint.base_url or not endpoint.model:
            raise ConfigError(
                f"{endpoint.name}: base_url and model are required",
                "set llm.base_url and llm.model in config.yaml, or LLM_BASE_URL and LLM_MODEL",
            )
        self.endpoint = endpoint
        self.base_url: str = endpoint.base_url
        self.model: str = endpoint.model
        self.budget = budget if budget is not None else TokenBudget(None)
        retries = endpoint.options.get("max_retries", 3)
        self.max_attempts = max(1, max_attempts if max_attempts is not None else 1 + retries)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.deadline = deadline
        import openai  # here, not at the top: it takes about a second to import

        self._http = http_client if http_client is not None else tls.http_client(endpoint)
        self._client = openai.OpenAI(
            base_url=self.base_url,
            # Local providers need no key; a placeholder stops openai reading OPENAI_API_KEY.
            api_key=endpoint.api_key or "no-key",
            http_client=self._http,
            max_retries=0,
            timeout=endpoint.timeout,
        )
        self._json_mode: bool | None = None  # None: untried; False: the provider rejects it
        self._schema_mode: bool | None = None  # the same for response_format json_schema

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- chat

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        temperature: float = 0,
        *,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> ChatResult:
        """One chat completion; tool calls parsed, ``<think>`` stripped, usage charged."""
        kwargs: dict[str, Any] = {"temperature": temperature}
        if tools:
            kwargs["tools"] = tools
            if tool_choice is not None:
                kwargs["tool_choice"] = tool_choice
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        return self._complete(messages, kwargs, self._until())

    def chat_json(
        self,
        messages: list[dict[str, Any]],
        temperature: float = 0,
        *,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """A JSON object answer: JSON mode when the provider supports it, else JSON-in-text.

        One repair round is spent when the answer holds no JSON object; LLMUnusable after.
        """
        until = self._until()
        extra = {"max_tokens": max_tokens} if max_tokens is not None else {}
        messages = _mention_json(messages)
        result = self._json_completion(messages, temperature, until, extra)
        value = extract_json_object(result.content)
        if value is None:
            repair = [
                *messages,
                {"role": "assistant", "content": result.content},
                {"role": "user", "content": "Reply with only one JSON object, nothing else."},
            ]
            value = extract_json_object(
                self._json_completion(repair, temperature, until, extra).content
            )
        if value is None:
            raise LLMUnusable(
                f"{self.endpoint.name}: {self.base_url} (model {self.model}) answered without "
                f"a JSON object: {result.content[:200]!r}",
                "use a model that follows JSON instructions, or one that supports JSON mode",
            )
        return value

    def chat_structured(
        self,
        messages: list[dict[str, Any]],
        schema: Mapping[str, Any],
        *,
        name: str = "answer",
        temperature: float = 0,
        max_tokens: int | None = None,
        validate: bool = True,
    ) -> dict[str, Any]:
        """A JSON object valid against ``schema`` (see the module docstring).

        ``response_format`` ``json_schema`` first; a provider that rejects it is asked in
        JSON mode (then JSON-in-text) from then on. Either way the answer is validated;
        one repair round lists the problems; ``LLMUnusable`` when it is still invalid.
        With ``validate=False`` any JSON object is returned: the caller checks it (and
        drops what does not fit rather than asking again).
        """
        until = self._until()
        extra = {"max_tokens": max_tokens} if max_tokens is not None else {}
        messages = _mention_json(messages)
        attempt = messages
        problems: list[str] = []
        for round_ in range(2):
            value = self._structured_once(attempt, schema, name, temperature, until, extra)
            if not validate and isinstance(value, dict):
                return value
            problems = schema_problems(value, schema)
            if not problems:
                assert value is not None
                return value
            if round_ == 0:
                shown = json.dumps(value, ensure_ascii=False)[:4000] if value else "(no JSON)"
                attempt = [
                    *messages,
                    {"role": "assistant", "content": shown},
                    {
                        "role": "user",
                        "content": "That answer does not fit the JSON Schema:\n"
                        + "\n".join(f"- {p}" for p in problems)
                        + "\nAnswer again with one JSON object that fits it.",
                    },
                ]
        raise LLMUnusable(
            f"{self.endpoint.name}: {self.base_url} (model {self.model}) answered twice with "
            f"JSON that does not fit the schema: {'; '.join(problems[:3])}",
            "use a model that follows JSON instructions, or a smaller llm.profile",
        )

    def _structured_once(
        self,
        messages: list[dict[str, Any]],
        schema: Mapping[str, Any],
        name: str,
        temperature: float,
        until: float | None,
        extra: Mapping[str, Any],
    ) -> dict[str, Any] | None:
        if self._schema_mode is not False:
            kwargs = {
                "temperature": temperature,
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": name, "schema": dict(schema)},
                },
                **extra,
            }
            try:
                result = self._complete(messages, kwargs, until)
                self._schema_mode = True
                return extract_json_object(result.content)
            except LLMError as exc:
                if not self._format_rejected(exc, self._schema_mode, "json_schema"):
                    raise
                self._schema_mode = False
        return extract_json_object(
            self._json_completion(messages, temperature, until, extra).content
        )

    def _format_rejected(self, exc: LLMError, known: bool | None, kind: str) -> bool:
        """Whether ``exc`` is a provider refusing ``response_format`` (never once it worked)."""
        status = getattr(exc.__cause__, "status_code", None)
        if known or status not in REJECTED_FORMAT:
            return False
        log.info(
            "%s: %s rejected response_format %s (HTTP %s); asking without it",
            self.endpoint.name,
            self.base_url,
            kind,
            status,
        )
        return True

    def _json_completion(
        self,
        messages: list[dict[str, Any]],
        temperature: float,
        until: float | None,
        extra: Mapping[str, Any] = MappingProxyType({}),
    ) -> ChatResult:
        if self._json_mode is not False:
            kwargs = {
                "temperature": temperature,
                "response_format": {"type": "json_object"},
                **extra,
            }
            try:
                result = self._complete(messages, kwargs, until)
                self._json_mode = True
                return result
            except LLMError as exc:
                if not self._format_rejected(exc, self._json_mode, "json_object"):
                    raise
        result = self._complete(messages, {"temperature": temperature, **extra}, until)
        if self._json_mode is None:
            # JSON mode failed but plain text worked: the provider lacks JSON mode.
            self._json_mode = False
        return result

    def _until(self) -> float | None:
        """The monotonic time by which a call that starts now must be done."""
        return time.monotonic() + self.deadline if self.deadline is not None else None

    def _complete(
        self, messages: list[dict[str, Any]], kwargs: dict[str, Any], until: float | None = None
    ) -> ChatResult:
        self.budget.check(estimate_tokens(messages))
        wire: Any = messages  # plain dicts; the SDK's TypedDicts add nothing here
        response = self._call(
            lambda timeout: self._client.chat.completions.create(
                model=self.model, messages=wire, timeout=timeout, **kwargs
            ),
            until,
        )
        if not response.choices:
            raise LLMError(
                f"{self.endpoint.name}: {self.base_url} (model {self.model}) returned no choices"
            )
        choice = response.choices[0]
        message = choice.message
        content = strip_think(message.content or "")
        calls = []
        for raw_call in message.tool_calls or ():
            function = getattr(raw_call, "function", None)
            if function is None:
                continue
            raw_args = function.arguments or ""
            calls.append(
                ToolCall(
                    id=raw_call.id,
                    name=function.name,
                    arguments=parse_arguments(raw_args),
                    raw_arguments=raw_args,
                )
            )
        usage = _usage_dict(response.usage, messages, message.content or "")
        self.budget.charge(usage, strict=False)
        return ChatResult(content, tuple(calls), usage, choice.finish_reason or "")

    # -- streaming

    def stream_chat(self, messages: list[dict[str, Any]], temperature: float = 0) -> Iterator[str]:
        """Stream the answer's text as it arrives (``<think>`` blocks filtered out).

        Retries happen only before the first chunk; usage is charged at the end (from
        the provider's usage chunk, else estimated).
        """
        import openai

        self.budget.check(estimate_tokens(messages))
        wire: Any = messages
        stream = self._call(
            lambda timeout: self._client.chat.completions.create(
                model=self.model,
                messages=wire,
                temperature=temperature,
                stream=True,
                stream_options={"include_usage": True},
                timeout=timeout,
            ),
            self._until(),
        )
        think = ThinkFilter()
        produced: list[str] = []
        usage: Any = None
        try:
            for chunk in stream:
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices:
                    piece = choice.delta.content or ""
                    produced.append(piece)
                    text = think.feed(piece)
                    if text:
                        yield text
            tail = think.flush()
            if tail:
                yield tail
        except openai.APIError as exc:
            raise self._error(exc) from exc
        except httpx2.HTTPError as exc:
            raise self._error(openai.APIConnectionError(request=exc.request)) from exc
        finally:
            stream.close()
            self.budget.charge(_usage_dict(usage, messages, "".join(produced)), strict=False)

    # -- retries and errors

    def _call(self, fn: Callable[[float], T], until: float | None = None) -> T:
        """``fn(timeout)`` with retries; every attempt ends by ``until`` (monotonic)."""
        import openai

        # A retry is not started with less time left than this (the first try always is).
        least = min(MIN_ATTEMPT_SECONDS, (self.deadline or 0.0) / 2)
        for attempt in range(1, self.max_attempts + 1):
            timeout = self.endpoint.timeout
            if until is not None:
                left = until - time.monotonic()
                if left <= 0 or (attempt > 1 and left < least):
                    raise self._late(attempt - 1)
                timeout = min(timeout, left)
            try:
                return fn(timeout)
            except openai.APITimeoutError as exc:
                if until is not None and until - time.monotonic() < least:
                    raise self._late(attempt) from exc
                if attempt == self.max_attempts:
                    raise self._error(exc, attempt) from exc
                wait = self._backoff(attempt)
            except openai.APIStatusError as exc:
                if exc.status_code not in RETRY_STATUS or attempt == self.max_attempts:
                    raise self._error(exc, attempt) from exc
                wait = retry_after(exc.response) or self._backoff(attempt)
            except openai.APIConnectionError as exc:
                if attempt == self.max_attempts:
                    raise self._error(exc, attempt) from exc
                wait = self._backoff(attempt)
            wait = min(wait, self.max_backoff)
            if until is not None:
                wait = max(0.0, min(wait, until - time.monotonic() - least))
            log.info(
                "%s: %s failed (attempt %d of %d); retrying in %.2fs",
                self.endpoint.name,
                self.base_url,
                attempt,
                self.max_attempts,
                wait,
            )
            time.sleep(wait)
        raise AssertionError("unreachable: the loop returns or raises")

    def _late(self, attempts: int) -> LLMTimeout:
        tried = f" after {attempts} attempt{'s' if attempts != 1 else ''}" if attempts else ""
        return LLMTimeout(
            f"{self.endpoint.name}: {self.base_url} (model {self.model}) did not answer within "
            f"its {self.deadline:g}s deadline{tried}",
            f"use a faster model, or raise {self.endpoint.name}.timeout",
        )

    def _backoff(self, attempt: int) -> float:
        return float(self.backoff * 2 ** (attempt - 1) * (1 + random.random() / 4))

    def _error(self, exc: openai.APIError, attempts: int = 1) -> LLMError:
        import openai

        name, where = self.endpoint.name, f"{self.base_url} (model {self.model})"
        tried = f" after {attempts} attempts" if attempts > 1 else ""
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = _error_detail(exc)
            hint = {
                401: "check the API key in $"
                + str(self.endpoint.options.get("api_key_env", f"{name}.api_key_env")),
                403: f"check the API key's permissions for model {self.model}",
                404: f"check {name}.base_url (it usually ends in /v1) and {name}.model",
            }.get(status, "")
            if not hint and status in RETRY_STATUS:
                hint = "the provider is overloaded or failing; try again later"
            error = LLMError(f"{name}: {where} answered HTTP {status}{tried}: {detail}", hint)
        elif isinstance(exc, openai.APITimeoutError):
            error = LLMTimeout(
                f"{name}: {where} timed out after {self.endpoint.timeout:g}s{tried}",
                f"raise {name}.timeout, or use a faster model",
            )
        else:
            cause = root_message(exc)
            if cause.startswith(f"{name}: TLS"):
                error = LLMError(cause)  # already names the integration, URL and the fix
            else:
                hint = f"check {name}.base_url and that the server is up"
                error = LLMError(f"{name}: cannot reach {where}{tried}: {cause}", hint)
        error.__cause__ = exc
        return error


def _mention_json(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # OpenAI refuses JSON mode unless a message says "json"; say it once if nobody did.
    if any("json" in str(m.get("content", "")).lower() for m in messages):
        return messages
    return [{"role": "system", "content": "Answer with one JSON object."}, *messages]


def _usage_dict(usage: Any, messages: Any, completion: str) -> dict[str, int]:
    if usage is not None and usage_tokens(usage) > 0:
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        done = int(getattr(usage, "completion_tokens", 0) or 0)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": done,
            "total_tokens": usage_tokens(usage),
        }
    # Some providers omit usage; estimate so the budget still counts the call.
    prompt, done = estimate_tokens(messages), estimate_tokens(completion)
    return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}


def _error_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message") or inner.get("detail")
            if message:
                return str(message)[:500]
        elif inner:
            return str(inner)[:500]
    return exc.message[:500]
