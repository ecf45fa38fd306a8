"""Tool calls a model wrote as JSON in its answer text instead of ``tool_calls``.

Small local models (Qwen2.5 1.5B with its own chat template, behind llama.cpp, Ollama
or LM Studio) often answer a tool request with the call as text: fenced or bare, in
one of a few shapes::

    ```json
    {"name": "kb_query", "arguments": {"question": "latest Globex meeting"}}
    ```
    <tool_call>{"name": "kb_query", "arguments": {...}}</tool_call>
    {"tool": "kb_query", "parameters": {...}}
    {"function": {"name": "kb_query", "arguments": "{\\"question\\": \\"...\\"}"}}
    [{"name": "kb_query", "arguments": {...}}, ...]

``calls_in`` reads them back as ``ToolCall``s (at most ``MAX_CALLS``). Only an answer
that is nothing but calls counts: prose that happens to contain JSON is an answer.
The names are not checked here; the loop refuses a tool it does not have.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

from memserver.clients.llm import ToolCall
from memserver.clients.llm_text import strip_think

MAX_CALLS = 4
_WRAPPERS = re.compile(r"```[a-zA-Z]*|```|</?tool_call>|</?tools?>", re.IGNORECASE)
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")


def calls_in(content: str) -> list[ToolCall]:
    """The tool calls ``content`` consists of, or [] when it is (also) prose."""
    text = _WRAPPERS.sub("\n", strip_think(content)).strip()
    if not text or text[0] not in "[{":
        return []
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    while position < len(text):
        try:
            value, end = decoder.raw_decode(text, position)
        except ValueError:
            return []  # not only JSON: an answer, not a call
        values.extend(value if isinstance(value, list) else [value])
        position = end
        while position < len(text) and text[position] in " \t\r\n,;":
            position += 1
    calls = [call for value in values if (call := _call(value)) is not None]
    return calls[:MAX_CALLS] if len(calls) == len(values) else []


def _call(value: Any) -> ToolCall | None:
    if not isinstance(value, Mapping):
        return None
    function = value.get("function")
    if isinstance(function, Mapping):  # the OpenAI wire shape, written out
        value = function
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if not name or not name.strip():
        return None
    raw: Any = next((value[k] for k in _ARGUMENT_KEYS if k in value), {})
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raw = {}
    arguments = dict(raw) if isinstance(raw, Mapping) else {}
    return ToolCall(
        id=f"text_{uuid.uuid4().hex[:12]}",
        name=name.strip(),
        arguments=arguments,
        raw_arguments=json.dumps(arguments, ensure_ascii=False),
    )
