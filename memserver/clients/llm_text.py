"""What a model's answer text needs before use: reasoning blocks removed (whole answers
and streams), the first JSON object found, tool-call arguments parsed leniently, a JSON
answer checked against the JSON Schema it was asked under."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_THINK_TAGS = ("think", "thinking")
_THINK_BLOCK = re.compile(r"<(think|thinking)>.*?</\1>", re.S | re.I)
MAX_SCHEMA_PROBLEMS = 8  # listed in one repair round
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def strip_think(text: str) -> str:
    """Remove reasoning blocks: ``<think>...</think>``, an orphan ``...</think>`` prefix
    (the opening tag was in the prompt template), and an unclosed trailing ``<think>``."""
    text = _THINK_BLOCK.sub("", text)
    for tag in _THINK_TAGS:
        close = f"</{tag}>"
        if close in text:
            text = text.rsplit(close, 1)[1]
        opened = text.find(f"<{tag}>")
        if opened >= 0:
            text = text[:opened]
    return text.strip()


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (after stripping think blocks and code fences)."""
    text = strip_think(text)
    candidate = _FENCE.sub("", text.strip())
    try:
        value = json.loads(candidate)
        if isinstance(value, dict):
            return value
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def parse_arguments(raw: str) -> dict[str, Any]:
    """Tool-call arguments as an object; {} when the model sent no or malformed JSON."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        value = extract_json_object(raw)
    return value if isinstance(value, dict) else {}


class ThinkFilter:
    """Drops ``<think>...</think>`` from a stream of text pieces, tags split or not."""

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self) -> None:
        self.buffer = ""
        self.inside = False
        self.started = False

    def feed(self, piece: str) -> str:
        self.buffer += piece
        out: list[str] = []
        while True:
            if self.inside:
                end = self.buffer.find(self.CLOSE)
                if end < 0:
                    self.buffer = self.buffer[-(len(self.CLOSE) - 1) :]
                    break
                self.buffer = self.buffer[end + len(self.CLOSE) :]
                self.inside = False
                continue
            start = self.buffer.find(self.OPEN)
            if start >= 0:
                out.append(self.buffer[:start])
                self.buffer = self.buffer[start + len(self.OPEN) :]
                self.inside = True
                continue
            keep = _partial_suffix(self.buffer, self.OPEN)
            out.append(self.buffer[: len(self.buffer) - keep])
            self.buffer = self.buffer[len(self.buffer) - keep :]
            break
        return self._emit("".join(out))

    def flush(self) -> str:
        text, self.buffer = ("" if self.inside else self.buffer), ""
        return self._emit(text)

    def _emit(self, text: str) -> str:
        if not self.started:
            text = text.lstrip()
            self.started = bool(text)
        return text


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


def schema_problems(value: Any, schema: Mapping[str, Any]) -> list[str]:
    """What keeps ``value`` from fitting ``schema`` (JSON Schema), at most a few; [] when it fits."""
    if not isinstance(value, dict):
        return ["the answer is not one JSON object"]
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    found = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        found.append(f"{where}: {error.message[:200]}")
        if len(found) >= MAX_SCHEMA_PROBLEMS:
            break
    return found
