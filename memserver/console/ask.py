"""The Ask view: a question (and its follow-ups) answered by the read agent, over HTTP.

The console sends the conversation to the read agent (``agent_link``) and shows the
same answer an API client gets: an extractive answer's lead and lines as the agent sent
them as objects (each date apart, its citations as links to the pages and notes), a
model's answer as its paragraphs with the citations listed as links, and "degraded"
in words. The conversation and the reference time live with the session
(``conversations``); "New conversation" starts over. The read agent reads every folder with its own token, so only a caller who may
see every folder ("*") may ask it; anyone else is told so. The notes' own period is shown, with how to ask as of it, because "last week"
means the week before the reference time, which is today unless set.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from memserver.console.agent_link import AgentUnavailable, Reply
from memserver.console.answer_text import cited_href
from memserver.console.sessions import Caller
from memserver.console.web import (
    ConsoleError,
    blocking,
    caller_period,
    console_of,
    form_of,
    redirect,
    render,
    signed_in,
    url,
)
from memserver.errors import UserError
from memserver.timeparse.now import parse_now

MAX_QUESTION_CHARS = 4000
# What each degraded reason means for the answer, in words.
DEGRADED = {
    "no_llm": "no language model is configured: the answer quotes the pages instead of writing one",
    "llm_unavailable": "the language model did not answer, so the answer quotes the pages",
    "llm_timeout": "the language model did not answer in time, so the answer quotes the pages",
    "budget_exceeded": "the token budget is spent, so the answer quotes the pages",
    "ingest_in_progress": "notes are still being ingested: newer ones may be missing",
    "embedding_pending": "some pages are not embedded yet: matches by meaning may be missing",
    "embedding_fallback_hash": "the server runs the hash embedder (words only): matches by "
    "meaning may be missing",
}


def degraded_words(reason: str) -> str:
    if reason.startswith("routing_"):
        return "the question's folders could not be chosen, so every folder was searched"
    return DEGRADED.get(reason, f"the search reported {reason.replace('_', ' ')}")


async def view(request: Request) -> Response:
    caller = await signed_in(request)
    return await _show(request, caller)


async def ask(request: Request) -> Response:
    """Ask the question (with the conversation so far); a form with a reference time and
    no question only sets the reference time."""
    caller = await signed_in(request)
    form = await form_of(request, caller)
    console = console_of(request)
    conversations = console.conversations
    question = str(form.get("question") or "").strip()
    now = str(form.get("now") or "").strip()
    try:
        parse_now(now, "the reference time")
    except UserError as exc:
        error = ConsoleError(400, exc.message, exc.hint or "")
        return await _show(request, caller, question=question, now=now, error=error)
    if not question:
        conversations.of(caller.session.id).now = now
        return redirect(url("ask"))
    if len(question) > MAX_QUESTION_CHARS:
        error = ConsoleError(
            400,
            f"the question is {len(question)} characters long; at most {MAX_QUESTION_CHARS}",
            "ask a shorter question",
        )
        return await _show(request, caller, question=question, now=now, error=error)
    link = console.read_agent
    if link is None or not caller.scope.all_folders:
        return await _show(request, caller, question=question, now=now)  # it says why
    history = conversations.of(caller.session.id).history()
    try:
        reply = await link.ask(question, history, now)
    except AgentUnavailable as exc:
        error = ConsoleError(503, exc.message, exc.hint)
        return await _show(request, caller, question=question, now=now, error=error)
    conversations.add(caller.session.id, reply)
    await blocking(console.record, caller, "ask", {"question": question[:200]}, "ok")
    return redirect(url("ask") + "#latest")


async def clear(request: Request) -> Response:
    caller = await signed_in(request)
    await form_of(request, caller)
    console_of(request).conversations.clear(caller.session.id)
    return redirect(url("ask"))


async def _show(
    request: Request,
    caller: Caller,
    *,
    question: str = "",
    now: str | None = None,
    error: ConsoleError | None = None,
) -> Response:
    console = console_of(request)
    conversation = console.conversations.of(caller.session.id)
    period = await caller_period(request, caller)
    exchanges = [(reply, _paragraphs(reply)) for reply in conversation.exchanges]
    return render(
        request,
        caller,
        "ask.html",
        error.status if error is not None else 200,
        agent=console.read_agent,
        exchanges=exchanges,
        question=question,
        now=conversation.now if now is None else now,
        period=period,
        error=error,
        degraded_words=degraded_words,
        cited_href=cited_href,
    )


def _paragraphs(reply: Reply) -> list[str]:
    """A model's answer as its paragraphs (none for an answer sent as lines)."""
    if reply.structured:
        return []
    return [p.strip() for p in reply.text.split("\n\n") if p.strip()]
