"""Writing an old version of a page again (the page view's restore, review's reject).

The old version is written exactly as it was stored, with what the signed-in token
cannot see (link fields into other folders, references to their pages): the page is
in the token's folders and it only puts back what the page said before. Guarded by the
version the user saw (a change written meanwhile is refused with 409, not lost) and
recorded as a ``console.restore`` audit row.
"""

from __future__ import annotations

from starlette.requests import Request

from memserver.console.sessions import Caller
from memserver.console.web import ConsoleError, blocking, console_of
from memserver.errors import NotFoundError


async def restore_version(
    caller: Caller, request: Request, page_id: str, version: int, base_version: int
) -> int:
    """Write ``version`` of ``page_id`` again as its newest version; the new version."""
    console = console_of(request)
    if not caller.scope.page_visible(page_id):
        raise ConsoleError(404, f"no page {page_id!r}", "open the page from the search again")
    caller.scope.require_write()

    def write() -> int:
        from memserver.kb.page import parse_page

        kb = console.services.kb()
        try:
            markdown = kb.get_version(page_id, version, caller.scope.folders)
        except NotFoundError:
            raise NotFoundError(
                f"page {page_id!r} has no version {version}", "open its history again"
            ) from None
        page = parse_page(markdown, source=f"{page_id} version {version}")
        folder, slug = page_id.split("/", 1)
        written = kb.put_page(
            folder,
            page,
            base_version,
            written_by=caller.scope.token_name,
            slug=slug,
            note=f"restore of version {version}",
        )
        return written.version

    new_version = await blocking(write)
    arguments = {"id": page_id, "version": version, "base_version": base_version}
    await blocking(console.record, caller, "restore", arguments, "ok")
    return new_version
