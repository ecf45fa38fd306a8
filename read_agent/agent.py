"""The read agent: an OpenAI-compatible tool-calling loop over the memory server's read tools.

::

    async with connect(settings.mcp) as memory:
        agent = ReadAgent(memory, LLMClient(settings.llm))
        answer = await agent.ask("When was the latest meeting with Globex?")
        print(answer.text, answer.citations)

For each question the model may call tools for at most ``max_steps`` turns; then it
must answer from what it has. Tool errors go back to the model as tool results. The
final answer is checked: a ``[folder/slug]`` the tools never returned is removed (and
listed in ``removed_citations``). When a ``kb_query`` finds no page that answers, the
agent asks it again over the raw source notes too (:mod:`read_agent.fallback`), in both
modes, and a note is cited as ``[source/<path>]``. Without an LLM (``llm=None``), or when the model
endpoint fails, the answer is the extractive digest of ``kb_query`` (``mode:
"extractive"``, the reason in ``degraded``).

The agent reaches knowledge only through MCP tools; it never opens the knowledge base.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from memserver.clients.budget import TokenBudget, estimate_tokens
from memserver.clients.llm import ChatResult, LLMClient
from memserver.clients.mcp import MemoryClient
from memserver.errors import BudgetExceeded, LLMError, SchemaError
from memserver.kb.schema import Schema, schema_from_view
from read_agent import extractive, followup
from read_agent.citations import Source, verify
from read_agent.fallback import QUERY_TOOL, query_with_sources
from read_agent.followup import Turn
from read_agent.toolset import CallLog, ToolRecord, Toolset

logger = logging.getLogger(__name__)

DEFAULT_MAX_STEPS = 6
MODE_AGENT = "agent"
MODE_EXTRACTIVE = "extractive"
NO_ANSWER = "The knowledge base has no answer to this question."

SYSTEM_PROMPT = """\
You answer questions about a company from its knowledge base, which you can reach \
only through the tools. Today is {today}.

Rules:
- Answer only from pages the tools returned in this conversation. Never use outside \
knowledge and never guess.
- Look things up before answering. {tool_hints}
- Give dates (YYYY-MM-DD) for events and facts.
- For "current", "now" or "latest" questions prefer the newest dated facts; if a page's \
timeline shows the value changed, give the newest value and say what it replaced.
- Cite every claim with the id of the page it comes from in square brackets, exactly \
as the tools returned it, e.g. [meetings/2026-11-12-globex-integration-review]. Cite \
only ids the tools returned.
- If pages disagree, say so and give each value with its citation.
- If the knowledge base has no answer, say plainly that the knowledge base has no \
answer. Do not invent one.
- Be concise: a direct answer first, then the supporting facts."""

_HINTS = {
    "kb_query": "kb_query searches everything and understands dates in the question "
    '("last week", "latest", "on 2026-09-15"); when no page answers it also searches the '
    "raw notes, cited as [source/...].",
    "kb_latest": "kb_latest gives the newest or first pages of a folder, optionally about "
    "one entity.",
    "kb_timeline": "kb_timeline lists what happened in a period, or one page's history.",
    "kb_get_page": "kb_get_page reads one page in full.",
    "kb_neighbors": "kb_neighbors follows typed links (who reports to whom, who attended).",
    "kb_resolve": "kb_resolve finds the page of a named person, company or thing.",
    "kb_list_pages": "kb_list_pages enumerates a folder, optionally in a date window.",
}

STEP_LIMIT_NOTE = (
    "You have used all your tool calls. Answer now from the pages retrieved so far, "
    "with citations, or say plainly that the knowledge base has no answer."
)


@dataclass(frozen=True)
class Timings:
    """Where the time of one answer went, in seconds."""

    total: float = 0.0
    model: float = 0.0
    tools: float = 0.0

    @property
    def overhead(self) -> float:
        """Time spent in the agent itself: neither waiting for the model nor for tools."""
        return max(0.0, self.total - self.model - self.tools)

    def as_dict(self) -> dict[str, float]:
        return {
            "total_ms": round(self.total * 1000, 1),
            "model_ms": round(self.model * 1000, 1),
            "tools_ms": round(self.tools * 1000, 1),
            "overhead_ms": round(self.overhead * 1000, 1),
        }


@dataclass(frozen=True)
class Answer:
    """A cited, dated answer and how it was produced."""

    question: str
    text: str
    citations: tuple[Source, ...]
    tool_calls: tuple[ToolRecord, ...]
    mode: str  # MODE_AGENT or MODE_EXTRACTIVE
    degraded: tuple[str, ...] = ()
    removed_citations: tuple[str, ...] = ()
    steps: int = 0
    usage: Mapping[str, int] = field(default_factory=dict)
    timings: Timings = Timings()

    def as_dict(self) -> dict[str, Any]:
        """The ``ask --json`` and ``POST /ask`` shape."""
        return {
            "question": self.question,
            "answer": self.text,
            "citations": [c.as_dict() for c in self.citations],
            "tool_calls": [c.as_dict() for c in self.tool_calls],
            "mode": self.mode,
            "degraded": list(self.degraded),
            "removed_citations": list(self.removed_citations),
            "steps": self.steps,
            "usage": dict(self.usage),
            "timings": self.timings.as_dict(),
        }


class ReadAgent:
    """Answers questions over one open MCP session; safe to share between tasks."""

    def __init__(
        self,
        memory: MemoryClient,
        llm: LLMClient | None,
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
        budget_tokens: int | None = None,
        extractive_results: int = extractive.DEFAULT_RESULTS,
    ) -> None:
        self.memory = memory
        self.llm = llm
        self.max_steps = max(1, max_steps)
        self.budget_tokens = budget_tokens
        self.extractive_results = extractive_results
        self._toolset: Toolset | None = None
        self._schema_view: Schema | None = None

    async def toolset(self, refresh: bool = False) -> Toolset:
        """The read tools this token may call (listed once, then cached)."""
        if self._toolset is None or refresh:
            self._toolset = await Toolset.discover(self.memory)
        return self._toolset

    async def ask(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        now: dt.datetime | None = None,
        known: Mapping[str, Source] | None = None,
    ) -> Answer:
        """Answer ``question`` after the earlier ``history`` turns.

        ``now`` is the reference time for relative dates (passed to every tool that
        takes one). ``known`` pages (verified in earlier turns of the same session) may
        be cited again without another lookup.
        """
        started = time.perf_counter()
        tools = await self.toolset()
        log = CallLog()
        if self.llm is None:
            return await self._extractive(question, history, tools, log, now, started, ("no_llm",))
        try:
            return await self._agent(question, history, tools, log, now, known or {}, started)
        except LLMError as exc:
            # The model endpoint is down or the budget is spent: answer without it.
            reason = "budget_exceeded" if isinstance(exc, BudgetExceeded) else "llm_unavailable"
            logger.warning("the model failed, answering extractively: %s", exc)
            return await self._extractive(question, history, tools, log, now, started, (reason,))

    # -- the tool-calling loop ------------------------------------------------------------

    async def _agent(
        self,
        question: str,
        history: Sequence[Turn],
        tools: Toolset,
        log: CallLog,
        now: dt.datetime | None,
        known: Mapping[str, Source],
        started: float,
    ) -> Answer:
        assert self.llm is not None
        budget = TokenBudget(self.budget_tokens)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system_prompt(tools.names, now)},
            *({"role": t.role, "content": t.content} for t in history),
            {"role": "user", "content": question},
        ]
        openai_tools = tools.openai_tools()
        model_seconds = 0.0
        usage: dict[str, int] = {}
        degraded: dict[str, None] = {}
        steps = 0
        result: ChatResult | None = None
        while True:
            final = steps >= self.max_steps
            if final:
                degraded.setdefault("step_limit", None)
                messages.append({"role": "user", "content": STEP_LIMIT_NOTE})
            budget.check(estimate_tokens(messages))
            tick = time.perf_counter()
            result = await anyio.to_thread.run_sync(
                functools.partial(
                    self.llm.chat,
                    messages,
                    openai_tools,
                    # The conversation holds tool calls, so the tools stay declared.
                    tool_choice="none" if final else None,
                )
            )
            model_seconds += time.perf_counter() - tick
            budget.charge(result.usage, strict=False)
            for key, value in result.usage.items():
                usage[key] = usage.get(key, 0) + int(value)
            steps += 1
            if final or not result.tool_calls:
                break
            messages.append(result.as_message())
            for call in result.tool_calls:
                text = await self._run_call(tools, call.name, call, log, now)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
        allowed = {**known, **log.sources}
        checked = verify(result.content or NO_ANSWER, allowed)
        if checked.removed:
            logger.info("removed citations the tools never returned: %s", checked.removed)
        return Answer(
            question=question,
            text=checked.text or NO_ANSWER,
            citations=tuple(allowed[c] for c in checked.cited),
            tool_calls=tuple(log.records),
            mode=MODE_AGENT,
            degraded=tuple({**log.degraded, **degraded}),
            removed_citations=checked.removed,
            steps=steps,
            usage=usage,
            timings=Timings(time.perf_counter() - started, model_seconds, log.seconds),
        )

    async def _run_call(
        self, tools: Toolset, name: str, call: Any, log: CallLog, now: dt.datetime | None
    ) -> str:
        raw = (call.raw_arguments or "").strip()
        if raw and not call.arguments and raw not in ("{}", "null"):
            # Malformed JSON from the model: say so instead of calling with no arguments.
            log.records.append(ToolRecord(name, {}, False, "arguments were not a JSON object"))
            return f"Error: the arguments of {name} were not a JSON object: {raw[:200]!r}"
        arguments = tools.with_now(name, call.arguments, now)
        if name == QUERY_TOOL:
            _, text, _ = await query_with_sources(tools, arguments, log)
        else:
            _, text, _ = await tools.call(name, arguments, log)
        return text

    # -- without a model ------------------------------------------------------------------

    async def _extractive(
        self,
        question: str,
        history: Sequence[Turn],
        tools: Toolset,
        log: CallLog,
        now: dt.datetime | None,
        started: float,
        reasons: tuple[str, ...],
    ) -> Answer:
        cited: list[Source] = []
        if QUERY_TOOL not in tools.tools:
            text = f"{NO_ANSWER} (This token cannot call {QUERY_TOOL}.)"
        else:
            schema = await self._schema(tools)
            answerer = extractive.Extractive(tools, log, schema, now, self.extractive_results)
            asked = await self._follow_up(question, history, answerer) if history else None
            text, cited = await answerer.answer(asked or question, query_argument(tools))
            if asked is not None:
                text += f"\nNote: read as “{asked}” (from the previous answer)."
        return Answer(
            question=question,
            text=text,
            citations=tuple(log.sources.get(s.id, s) for s in cited),
            tool_calls=tuple(log.records),
            mode=MODE_EXTRACTIVE,
            degraded=tuple(dict.fromkeys([*reasons, *log.degraded])),
            timings=Timings(time.perf_counter() - started, 0.0, log.seconds),
        )

    async def _follow_up(
        self, question: str, history: Sequence[Turn], answerer: extractive.Extractive
    ) -> str | None:
        """The question with a pronoun or an ellipsis resolved from the previous answer's
        pages (``read_agent.followup``), or None."""
        priors = []
        for page_id in followup.prior_ids(history):
            page = await answerer.page(page_id)
            if page is not None:
                priors.append(
                    followup.Prior(
                        page_id,
                        str(page.get("title") or ""),
                        tuple(str(a) for a in page.get("aliases") or ()),
                        answerer.is_person(page),
                        answerer.link_names(page),
                    )
                )
        asked = followup.rewrite(question, followup.prior_question(history), priors)
        answerer.pages.clear()  # read again for the new question, in its own order
        return asked

    async def _schema(self, tools: Toolset) -> Schema | None:
        """The schema of the folders this token reads (``kb_schema``, read once)."""
        if self._schema_view is None and "kb_schema" in tools.tools:
            ok, _, view = await tools.call("kb_schema", {}, CallLog())
            if ok and isinstance(view, Mapping):
                try:
                    self._schema_view = schema_from_view(view)
                except SchemaError as exc:  # a schema this client cannot read: answer without
                    logger.warning("could not read the schema: %s", exc)
        return self._schema_view


def query_argument(tools: Toolset) -> str:
    """The name ``kb_query`` gives its question parameter (``question`` or ``query``)."""
    for name in ("question", "query", "q", "text"):
        if tools.accepts(QUERY_TOOL, name):
            return name
    return "question"


def system_prompt(tool_names: Sequence[str], now: dt.datetime | None) -> str:
    """The system prompt, naming only the tools this token has."""
    moment = now if now is not None else dt.datetime.now().astimezone()
    today = moment.strftime("%Y-%m-%d (%A)")
    hints = " ".join(_HINTS[name] for name in tool_names if name in _HINTS)
    return SYSTEM_PROMPT.format(today=today, tool_hints=hints or "Use the tools.")
