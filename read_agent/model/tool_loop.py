"""The tool-calling loop, made to survive small models.

Each turn the model either calls tools or answers. What a small model does instead,
and what the loop does about it:

- the call is written as JSON in the answer text (fenced, bare, ``<tool_call>``) with
  no ``tool_calls``: it is read back (:mod:`read_agent.model.text_calls`) and run;
- a tool it does not have: the result tells it which tools exist and how to call the
  main one (``Toolset.call``);
- the same call again (same tool, same arguments) after its result: not run again;
  the result says to answer from what it has, and a second repeat ends the loop;
- more than ``max_steps`` turns: the last turn must answer;
- a tool's result reaches it in a fenced block labelled as quoted data, never
  instructions (:func:`read_agent.model.quoting.fence`); the loop keeps the results, so
  the agent can check the answer did not carry out an instruction written in them;
- its answer is blank (a provider looping on ``tool_choice``): ``CannotDriveTools``, and
  the agent answers from evidence it finds itself (:mod:`read_agent.model.written_answer`); so
  it does when the answer cites nothing after no lookup at all (a plan written as the
  answer) or after lookups that found pages (``ReadAgent._agent``).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from memserver.clients.budget import TokenBudget, estimate_tokens
from memserver.clients.llm import ChatResult, LLMClient, ToolCall
from memserver.clients.profile import ModelProfile
from memserver.clients.threads import run_abandonable
from read_agent.model.quoting import fence
from read_agent.model.text_calls import calls_in
from read_agent.tools.raw_notes import QUERY_TOOL, query_with_sources
from read_agent.tools.toolset import CallLog, ToolRecord, Toolset

MAX_REPEATS = 2  # identical calls refused before the loop makes the model answer

STEP_LIMIT_NOTE = (
    "You have used all your tool calls. Answer now from the pages retrieved so far, "
    "with citations, or say plainly that the knowledge base has no answer."
)
REPEAT_NOTE = (
    "Error: you already called {name} with these arguments; its result is above. Answer "
    "the question now from it, citing page ids in square brackets, or call a different "
    "tool or the same tool with different arguments."
)


class CannotDriveTools(Exception):
    """The model answers instead of calling tools (``reason`` says how it showed)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class LoopResult:
    """The model's last answer and what the loop spent on it."""

    content: str
    steps: int = 0
    model_seconds: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    degraded: dict[str, None] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)  # the tool results the model read


@dataclass
class ToolLoop:
    """One question's loop (see the module docstring)."""

    llm: LLMClient
    profile: ModelProfile
    tools: Toolset
    log: CallLog
    now: dt.datetime | None
    max_steps: int
    budget: TokenBudget

    async def run(self, messages: list[dict[str, Any]]) -> LoopResult:
        out = LoopResult("")
        seen: dict[str, int] = {}
        openai_tools = self.tools.openai_tools()
        final = False
        while True:
            final = final or out.steps >= self.max_steps
            if final:
                out.degraded.setdefault("step_limit", None)
                messages.append({"role": "user", "content": STEP_LIMIT_NOTE})
            result = await self._turn(messages, openai_tools, final, out)
            calls = list(result.tool_calls)
            if not calls and not final:
                calls = calls_in(result.content)
                if calls:
                    out.degraded.setdefault("tool_call_in_text", None)
                    result = ChatResult("", tuple(calls), result.usage, result.finish_reason)
            if final or not calls:
                break
            messages.append(result.as_message())
            for call in calls:
                text, repeats = await self._run_call(call, seen)
                if not repeats:
                    out.evidence.append(text)
                    text = fence(f"Result of {call.name}", text)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
                if repeats:
                    out.degraded.setdefault("repeated_call", None)
                    final = final or repeats >= MAX_REPEATS
        out.content = result.content.strip()
        if not out.content:
            raise CannotDriveTools("model_answer_blank")
        return out

    async def _turn(
        self,
        messages: list[dict[str, Any]],
        openai_tools: list[dict[str, Any]],
        final: bool,
        out: LoopResult,
    ) -> ChatResult:
        self.budget.check(estimate_tokens(messages))
        tick = time.perf_counter()
        result = await run_abandonable(
            functools.partial(
                self.llm.chat,
                messages,
                openai_tools,
                # The conversation holds tool calls, so the tools stay declared.
                tool_choice="none" if final else None,
                max_tokens=self.profile.max_tokens,
            )
        )
        out.model_seconds += time.perf_counter() - tick
        self.budget.charge(result.usage, strict=False)
        for key, value in result.usage.items():
            out.usage[key] = out.usage.get(key, 0) + int(value)
        out.steps += 1
        return result

    async def _run_call(self, call: ToolCall, seen: dict[str, int]) -> tuple[str, int]:
        """The text the model reads for ``call``, and how often it repeated (0: new)."""
        raw = (call.raw_arguments or "").strip()
        if raw and not call.arguments and raw not in ("{}", "null"):
            # Malformed JSON from the model: say so instead of calling with no arguments.
            self.log.records.append(
                ToolRecord(call.name, {}, False, "arguments were not a JSON object")
            )
            return f"Error: the arguments of {call.name} were not a JSON object: {raw[:200]!r}", 0
        key = json.dumps([call.name, call.arguments], sort_keys=True, ensure_ascii=False)
        if key in seen:
            seen[key] += 1
            return REPEAT_NOTE.format(name=call.name), seen[key]
        seen[key] = 0
        arguments = self.tools.with_now(call.name, call.arguments, self.now)
        if call.name == QUERY_TOOL:  # the raw notes too when no page answers
            _, text, _ = await query_with_sources(self.tools, arguments, self.log)
        else:
            _, text, _ = await self.tools.call(call.name, arguments, self.log)
        return text, 0
