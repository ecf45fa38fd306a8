"""The review view: flagged changes (accept, reject, edit), open conflicts, recent updates
and open questions, in the words ``memserver review`` uses.

An *open conflict* (``unresolved``) waits for a person: two sources disagree, or the
ingest agent held a change back. An *update* (``superseded``) is history: a newer note
replaced an older value and the page already says the new one; it is listed to read,
not to decide.

Every action that writes a page goes through ``kb_put_page`` with the version the
reviewer saw as ``base_version`` (a change written meanwhile is refused, not lost), and
every decision is an audit row (``console.review.<decision>``, ``console.conflict.resolve``,
``console.held.<accept|reject>``) next to the tool call's own.

A *held change* (an unresolved row whose note starts ``review:``: what the ingest agent
held back, ``memserver.store.held``) can also be accepted (its value set, or its section
replaced, on the page as it is now) or rejected (the page unchanged but for its Open
Question); either way the row is marked resolved with who decided it.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from memserver.console.restore import restore_version
from memserver.console.sessions import Caller
from memserver.console.web import (
    ConsoleError,
    blocking,
    console_of,
    form_of,
    redirect,
    render,
    signed_in,
    tool,
    url,
)
from memserver.errors import UserError
from memserver.server.prose_scope import redact_for
from memserver.store.held import applied, is_held, require_open, without_question
from memserver.store.reviews import Conflict, Review

LIMIT = 100
UPDATES = 30  # the most recent updates shown


def _id(request: Request, name: str = "id") -> int:
    try:
        return int(request.path_params[name])
    except ValueError:
        raise ConsoleError(404, "no such item", "open the review list again") from None


def _version(value: Any) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise ConsoleError(
            400, "the form has no base_version", "reload the review list and try again"
        ) from None


async def _pending(request: Request, caller: Caller, review_id: int) -> Review:
    """The flagged change, refused (409, nothing written) once someone decided it."""
    review = await blocking(console_of(request).reviews().get, review_id, caller.scope.folders)
    if review.status != "pending":
        raise ConsoleError(
            409,
            f"the change to {review.page_id} (version {review.version}) was already "
            f"{review.status} by {review.decided_by or 'someone'}; nothing was written",
            "reload the review list",
        )
    return review


async def _decide(
    request: Request, caller: Caller, review_id: int, decision: str, result: int | None = None
) -> Review:
    """Record the decision on a flagged change, and its audit row."""
    console = console_of(request)
    decided = await blocking(
        console.reviews().decide,
        review_id,
        decision,
        by=caller.scope.token_name,
        folders=caller.scope.folders,
        result_version=result,
    )
    action = {"accepted": "accept", "rejected": "reject", "edited": "edit"}[decision]
    await blocking(console.record, caller, f"review.{action}", {"id": review_id}, "ok")
    return decided


async def view(request: Request) -> Response:
    caller = await signed_in(request)
    reviews = console_of(request).reviews()
    folders = caller.scope.folders
    pending = await blocking(reviews.pending, folders, LIMIT)
    conflicts = await blocking(reviews.conflicts, folders, ("unresolved",), LIMIT)
    updates = await blocking(reviews.conflicts, folders, ("superseded", "resolved"), UPDATES)
    questions = await blocking(reviews.open_questions, folders, LIMIT)
    shown = await blocking(
        redact_for,
        (pending, conflicts, questions, updates),
        caller.scope,
        console_of(request).services,
    )
    return render(
        request,
        caller,
        "review.html",
        pending=shown[0],
        conflicts=shown[1],
        updates=shown[3],
        questions=shown[2],
        done=request.query_params.get("done", ""),
    )


async def accept(request: Request) -> Response:
    caller = await signed_in(request, write=True)
    await form_of(request, caller)
    decided = await _decide(request, caller, _id(request), "accepted")
    return redirect(url("review", done=f"accepted {decided.page_id} v{decided.version}"))


async def reject(request: Request) -> Response:
    """Write the version before the flagged one again (guarded by the flagged version)."""
    caller = await signed_in(request, write=True)
    form = await form_of(request, caller)
    review_id = _id(request)
    base = _version(form.get("base_version"))
    review = await _pending(request, caller, review_id)
    if review.base_version is None:
        raise ConsoleError(
            400,
            f"the change created {review.page_id}: there is no earlier version to go back to",
            "edit the page instead, or accept it",
        )
    written = await restore_version(caller, request, review.page_id, review.base_version, base)
    await _decide(request, caller, review_id, "rejected", written)
    done = (
        f"rejected {review.page_id} v{review.version}: v{review.base_version} is back as v{written}"
    )
    return redirect(url("review", done=done))


async def edit(request: Request) -> Response:
    caller = await signed_in(request, write=True)
    review_id = _id(request)
    review = await _pending(request, caller, review_id)
    if request.method == "GET":
        current = await tool(caller, request, "kb_get_page", id=review.page_id)
        return render(request, caller, "edit.html", review=review, page=current, error="")
    form = await form_of(request, caller)
    base = _version(form.get("base_version"))
    markdown = str(form.get("markdown") or "")
    put = await tool(
        caller, request, "kb_put_page", id=review.page_id, markdown=markdown, base_version=base
    )
    await _decide(request, caller, review_id, "edited", put["version"])
    return redirect(url("review", done=f"edited {review.page_id}: now v{put['version']}"))


async def resolve_conflict(request: Request) -> Response:
    caller = await signed_in(request, write=True)
    form = await form_of(request, caller)
    conflict_id = _id(request)
    console = console_of(request)
    note = str(form.get("note") or "").strip()[:500] or f"resolved by {caller.scope.token_name}"
    await blocking(
        console.reviews().resolve_conflict, conflict_id, note=note, folders=caller.scope.folders
    )
    await blocking(console.record, caller, "conflict.resolve", {"id": conflict_id}, "ok")
    return redirect(url("review", done=f"resolved conflict {conflict_id}"))


async def _held(request: Request, caller: Caller, conflict_id: int) -> Conflict:
    """The held change, refused (409, nothing written) once someone decided it."""
    row = await blocking(console_of(request).reviews().conflict, conflict_id, caller.scope.folders)
    try:
        require_open(row)
    except UserError as exc:  # not a held change at all: 400; one already decided: 409
        raise ConsoleError(409 if is_held(row) else 400, exc.message, exc.hint or "") from None
    return row


async def _settle_held(request: Request, accept: bool) -> Response:
    """Accept (apply the proposal) or reject a held change: the page as it is now, guarded
    by the version the reviewer saw, loses the row's Open Question; the row is resolved."""
    from memserver.kb.page import parse_page, render_page

    caller = await signed_in(request, write=True)
    form = await form_of(request, caller)
    conflict_id = _id(request)
    base = _version(form.get("base_version"))
    console = console_of(request)
    reviews = console.reviews()
    row = await _held(request, caller, conflict_id)
    current = await tool(caller, request, "kb_get_page", id=row.page_id)
    if int(current["version"]) != base:
        raise ConsoleError(
            409,
            f"{row.page_id} changed since you opened the review list (you saw v{base}, it "
            f"is now v{current['version']}); nothing was written",
            "reload the review list, read the page as it is now, and decide again",
        )
    shared = await blocking(reviews.open_notes, row.page_id, besides=conflict_id)
    page = parse_page(str(current["markdown"]), source=row.page_id)
    try:
        changed = applied(page, row, shared) if accept else without_question(page, row, shared)
    except UserError as exc:
        raise ConsoleError(400, exc.message, exc.hint or "") from None
    version = base
    if changed != page:
        folder = console.services.schema().folder(row.folder)
        markdown = render_page(changed, folder)
        put = await tool(
            caller, request, "kb_put_page", id=row.page_id, markdown=markdown, base_version=base
        )
        version = int(put["version"])
    decision = "accepted" if accept else "rejected"
    await blocking(
        reviews.settle_held,
        conflict_id,
        decision,
        by=caller.scope.token_name,
        folders=caller.scope.folders,
        version=version,
    )
    action = "accept" if accept else "reject"
    await blocking(console.record, caller, f"held.{action}", {"id": conflict_id}, "ok")
    done = f"{decision} the held change to {row.page_id} ({row.field}): now v{version}"
    return redirect(url("review", done=done))


async def accept_held(request: Request) -> Response:
    return await _settle_held(request, accept=True)


async def reject_held(request: Request) -> Response:
    return await _settle_held(request, accept=False)
