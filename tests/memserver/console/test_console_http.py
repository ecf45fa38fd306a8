"""The console over plain HTTP: sign-in, scope, CSRF, Host/Origin, read-only tokens,
admin views, the trusted login link and the ingest event stream."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from importlib import resources

import httpx2
import pytest

from memserver.kb.manifest import Manifest
from tests.memserver.console.conftest import HELD, LOGIN_KEY, ConsoleServer, csrf_of

PAGE = "people/bob-martinez"


def _versions(server: ConsoleServer, page_id: str) -> list[int]:
    return [v.version for v in server.kb().history(page_id)]


def test_sign_in_sets_a_strict_http_only_cookie_and_a_bad_token_is_refused(
    console_server: ConsoleServer,
) -> None:
    _, secret = console_server.token("people")
    with console_server.client() as client:
        page = client.get("/ui/login")
        assert page.status_code == 200
        refused = client.post("/ui/login", data={"csrf": csrf_of(page.text), "token": "ms_nope"})
        assert refused.status_code == 401
        assert "unknown, expired or revoked" in refused.text
        page = client.get("/ui/login")
        response = client.post("/ui/login", data={"csrf": csrf_of(page.text), "token": secret})
    assert response.status_code == 303
    cookie = next(v for v in response.headers.get_list("set-cookie") if v.startswith("ms_console="))
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie


def test_the_sign_in_form_needs_its_own_csrf_token(console_server: ConsoleServer) -> None:
    _, secret = console_server.token("people")
    with console_server.client() as client:
        client.get("/ui/login")
        response = client.post("/ui/login", data={"csrf": "forged", "token": secret})
    assert response.status_code == 403
    assert "ms_console=" not in " ".join(response.headers.get_list("set-cookie"))


def test_pages_need_a_session_and_say_so(console_server: ConsoleServer) -> None:
    with console_server.client() as client:
        response = client.get("/ui/")
    assert response.status_code == 303
    assert response.headers["location"].startswith("/ui/login")


def test_a_scoped_token_sees_only_its_folders(console_server: ConsoleServer) -> None:
    _, secret = console_server.token("people")
    with console_server.signed_in(secret) as client:
        results = client.get("/ui/", params={"q": "Globex"})
        assert results.status_code == 200
        ids = [
            line.split("[", 1)[1].split("]", 1)[0] for line in results.text.split('class="id">')[1:]
        ]
        assert ids and all(i.startswith("people/") for i in ids)
        # a page outside the token's folders is exactly as missing as a page that is not there
        hidden = client.get("/ui/page/companies/globex")
        missing = client.get("/ui/page/people/nobody-at-all")
        assert hidden.status_code == missing.status_code == 404
        assert "companies/globex" in hidden.text and "Globex Corporation" not in hidden.text
        page = client.get(f"/ui/page/{PAGE}")
    assert page.status_code == 200
    assert "companies/" not in page.text  # links into other folders are left out


def test_a_form_from_another_origin_is_refused(console_server: ConsoleServer) -> None:
    _, secret = console_server.token("*", write=True)
    before = _versions(console_server, PAGE)
    with console_server.signed_in(secret) as client:
        page = client.get(f"/ui/page/{PAGE}")
        form = {
            "csrf": csrf_of(page.text),
            "version": str(before[-1]),
            "base_version": str(before[0]),
        }
        cross = client.post(
            f"/ui/page/{PAGE}/restore", data=form, headers={"Origin": "http://evil.example"}
        )
        forged = client.post(f"/ui/page/{PAGE}/restore", data={**form, "csrf": "guessed"})
        blank = client.post(
            f"/ui/page/{PAGE}/restore", data={k: v for k, v in form.items() if k != "csrf"}
        )
    assert cross.status_code == 403
    assert forged.status_code == 403 and "CSRF" in forged.text
    assert blank.status_code == 403
    assert _versions(console_server, PAGE) == before
    outcomes = [e.outcome for e in console_server.audit.query(tool="console.csrf")]
    assert outcomes.count("error:csrf") >= 2


def test_a_read_token_cannot_write(console_server: ConsoleServer) -> None:
    _, secret = console_server.token("*")
    before = _versions(console_server, PAGE)
    with console_server.signed_in(secret) as client:
        page = client.get(f"/ui/page/{PAGE}")
        assert "restore" not in page.text
        response = client.post(
            f"/ui/page/{PAGE}/restore",
            data={
                "csrf": csrf_of(page.text),
                "version": str(before[-1]),
                "base_version": str(before[0]),
            },
        )
        retry = client.post("/ui/ingest/retry", data={"csrf": csrf_of(page.text), "path": HELD})
    assert response.status_code == 403 and "read-only" in response.text
    assert retry.status_code == 403
    assert _versions(console_server, PAGE) == before


def test_a_foreign_host_header_is_refused(console_server: ConsoleServer) -> None:
    with console_server.client() as client:
        response = client.get("/ui/login", headers={"Host": "evil.example.com"})
    assert response.status_code == 421


def test_pages_keep_scripts_and_frames_to_themselves(console_server: ConsoleServer) -> None:
    with console_server.client() as client:
        response = client.get("/ui/login")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert response.headers["x-frame-options"] == "DENY"
    assert "<script>" not in response.text  # every script is a file under /ui/static


def test_admin_views_need_an_admin(console_server: ConsoleServer) -> None:
    _, writer = console_server.token("people,meetings", write=True)
    _, admin = console_server.token("*", write=True)
    with console_server.signed_in(writer) as client:
        assert client.get("/ui/tokens").status_code == 403
        assert client.get("/ui/audit").status_code == 403
    with console_server.signed_in(admin) as client:
        assert client.get("/ui/tokens").status_code == 200
        audit = client.get("/ui/audit", params={"tool": "console.login", "outcome": "ok"})
    assert audit.status_code == 200 and "console.login" in audit.text


def test_the_trusted_login_link_signs_in_as_admin(console_server: ConsoleServer) -> None:
    with console_server.client() as client:
        assert client.get("/ui/login", params={"key": "wrong"}).status_code == 401
        response = client.get("/ui/login", params={"key": LOGIN_KEY})
        assert response.status_code == 303
        tokens = client.get("/ui/tokens")
    assert tokens.status_code == 200 and "console-trusted" in tokens.text


def test_creating_a_token_shows_its_secret_once(console_server: ConsoleServer) -> None:
    _, admin = console_server.token("*", write=True)
    with console_server.signed_in(admin) as client:
        page = client.get("/ui/tokens")
        created = client.post(
            "/ui/tokens/create",
            data={"csrf": csrf_of(page.text), "name": "made-in-ui", "folders": "people"},
        )
        bad = client.post(
            "/ui/tokens/create",
            data={"csrf": csrf_of(page.text), "name": "bad-folder", "folders": "nowhere"},
        )
        again = client.get("/ui/tokens")
    secret = created.text.split('<pre id="secret">', 1)[1].split("</pre>", 1)[0]
    assert console_server.tokens.verify(secret) is not None
    assert secret not in again.text
    assert bad.status_code == 400 and "unknown folder" in bad.text


def test_the_event_stream_sends_the_ledger_when_it_changes(console_server: ConsoleServer) -> None:
    _, secret = console_server.token("*", write=True)
    note = console_server.paths.source / "stream-test.md"
    with (
        console_server.signed_in(secret) as client,
        client.stream("GET", "/ui/ingest/events") as stream,
    ):
        assert stream.headers["content-type"].startswith("text/event-stream")
        events = (json.loads(line[6:]) for line in stream.iter_lines() if line.startswith("data: "))
        first = next(events)
        note.write_text(
            "---\ntitle: Stream test\ndate: 2026-12-01\n---\nA note.\n", encoding="utf-8"
        )
        try:
            Manifest(console_server.paths).scan()
            second = next(events)
        finally:
            note.unlink()
            Manifest(console_server.paths).scan()
    assert second["counts"]["pending"] == first["counts"]["pending"] + 1
    assert second["total"] == first["total"] + 1


def test_the_console_ships_its_scripts_and_their_licences(console_server: ConsoleServer) -> None:
    vendor = resources.files("memserver.console") / "static" / "vendor"
    for name in ("d3-force", "d3-quadtree", "d3-dispatch", "d3-timer"):
        assert (vendor / f"{name}.min.js").is_file()
        assert (
            "ISC" in (vendor / f"{name}.LICENSE").read_text()
            or "Permission" in (vendor / f"{name}.LICENSE").read_text()
        )
    with httpx2.Client(base_url=console_server.base_url) as client:
        response = client.get("/ui/static/vendor/d3-force.min.js")
    assert response.status_code == 200 and "forceSimulation" in response.text
    assert shutil.which("chromium") is not None  # the browser tests' browser, from `make test`


def test_a_failed_note_shows_its_error_and_can_be_retried(console_server: ConsoleServer) -> None:
    _, secret = console_server.token("*", write=True)
    manifest = Manifest(console_server.paths)
    path = "team/2026-06-03-team-changes.md"
    manifest.mark_failed(path, "the model timed out after 60 s")
    with console_server.signed_in(secret) as client:
        page = client.get("/ui/ingest")
        assert "the model timed out after 60 s" in page.text
        retried = client.post("/ui/ingest/retry", data={"csrf": csrf_of(page.text), "path": path})
    assert retried.status_code == 303
    assert manifest.get(path).status.value == "updated"  # queued again (it was ingested before)
    assert console_server.audit.query(tool="source_mark")[-1].outcome == "ok"
    console_server.ingest("--file", path)


def test_restore_writes_an_old_version_again_and_the_diff_shows_what_changed(
    console_server: ConsoleServer,
) -> None:
    _, secret = console_server.token("*", write=True)
    page_id = "projects/mongolian-localization"
    kb = console_server.kb()
    stored = kb.get_page(page_id)
    old = stored.markdown
    changed = kb.put_page(
        "projects",
        replace(stored.page, aliases=("L10n",)),
        stored.version,
        slug=page_id.split("/")[1],
    )
    with console_server.signed_in(secret) as client:
        page = client.get(f"/ui/page/{page_id}")
        diff = client.get(
            f"/ui/page/{page_id}/diff", params={"a": stored.version, "b": changed.version}
        )
        form = {
            "csrf": csrf_of(page.text),
            "version": str(stored.version),
            "base_version": str(changed.version),
        }
        restored = client.post(f"/ui/page/{page_id}/restore", data=form)
        stale = client.post(f"/ui/page/{page_id}/restore", data=form)
    assert '<td class="after">aliases: L10n</td></tr>' in diff.text  # side by side
    assert restored.status_code == 303
    assert f"restored={stored.version}%3A{changed.version + 1}" in restored.headers["location"]
    assert kb.get_page(page_id).markdown == old
    assert stale.status_code == 409  # the page moved on since the form was shown: refused


def test_edit_a_flagged_change_and_resolve_a_conflict(console_server: ConsoleServer) -> None:
    writer, secret = console_server.token("*", write=True)
    kb = console_server.kb()
    page_id = "companies/initech"
    stored = kb.get_page(page_id)
    flagged = kb.put_page(
        "companies",
        replace(stored.page, aliases=("Initech Inc",)),
        stored.version,
        slug="initech",
        written_by="ingest",
        review="new alias from one source",
        conflicts=[
            {"field": "employees", "old_value": 60, "new_value": 80, "status": "unresolved"}
        ],
    )
    review = next(r for r in console_server.kb_reviews().pending(None) if r.page_id == page_id)
    assert review.version == flagged.version
    with console_server.signed_in(secret) as client:
        form = client.get(f"/ui/review/{review.id}/edit")
        markdown = kb.get_page(page_id).markdown.replace("Initech Inc", "Initech Incorporated")
        saved = client.post(
            f"/ui/review/{review.id}/edit",
            data={
                "csrf": csrf_of(form.text),
                "base_version": str(flagged.version),
                "markdown": markdown,
            },
        )
        listing = client.get("/ui/review")
        conflict = next(
            c for c in console_server.kb_reviews().conflicts(None) if c.page_id == page_id
        )
        assert "employees" in listing.text
        resolved = client.post(
            f"/ui/conflicts/{conflict.id}/resolve",
            data={"csrf": csrf_of(listing.text), "note": "80 since October"},
        )
    assert saved.status_code == 303 and resolved.status_code == 303
    assert "Initech Incorporated" in kb.get_page(page_id).markdown
    decided = console_server.kb_reviews().get(review.id, None)
    assert (decided.status, decided.decided_by, decided.result_version) == (
        "edited",
        writer,
        flagged.version + 1,
    )
    assert conflict.id not in {c.id for c in console_server.kb_reviews().conflicts(None)}


def test_the_event_stream_ends_when_its_token_is_revoked(console_server: ConsoleServer) -> None:
    name, secret = console_server.token("*", write=True)
    with (
        console_server.signed_in(secret) as client,
        client.stream("GET", "/ui/ingest/events") as stream,
    ):
        lines = stream.iter_lines()
        assert any(line.startswith("event: ledger") for line in lines)
        console_server.tokens.revoke(name)
        rest = list(lines)  # the server ends the stream itself
    assert "event: signed-out" in rest


def test_an_error_page_keeps_the_navigation_of_the_signed_in_caller(
    console_server: ConsoleServer,
) -> None:
    name, secret = console_server.token("people")
    with console_server.signed_in(secret) as client:
        response = client.get("/ui/page/people/nobody-at-all")
        unknown = client.get("/ui/no-such-view")
    assert response.status_code == 404 and f"{name} [people, read]" in response.text
    assert unknown.status_code == 404 and 'id="sign-out"' in unknown.text


def test_rejecting_a_change_the_page_has_moved_past_is_refused(
    console_server: ConsoleServer,
) -> None:
    _, secret = console_server.token("*", write=True)
    kb = console_server.kb()
    page_id = "people/dana-whitfield"
    stored = kb.get_page(page_id)
    flagged = kb.put_page(
        "people",
        replace(stored.page, aliases=("Dana W",)),
        stored.version,
        slug="dana-whitfield",
        review="alias?",
    )
    later = kb.put_page(
        "people",
        replace(stored.page, aliases=("Dana W", "DW")),
        flagged.version,
        slug="dana-whitfield",
    )
    review = next(r for r in console_server.kb_reviews().pending(None) if r.page_id == page_id)
    with console_server.signed_in(secret) as client:
        listing = client.get("/ui/review")
        assert "the page changed since" in listing.text
        refused = client.post(
            f"/ui/review/{review.id}/reject",
            data={"csrf": csrf_of(listing.text), "base_version": str(review.version)},
        )
    assert refused.status_code == 409
    assert kb.get_page(page_id).version == later.version  # the later change is kept
    assert console_server.kb_reviews().get(review.id, None).status == "pending"


def test_the_ingest_view_and_its_stream_show_how_embedding_goes(
    console_server: ConsoleServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, secret = console_server.token("*", write=True)
    with console_server.signed_in(secret) as client:
        quiet = client.get("/ui/ingest")  # the hash embedder: no background embedding
        counts = iter([(40, 60), (70, 30), (70, 30)])
        monkeypatch.setattr(console_server.kb(), "embedding_counts", lambda: next(counts))
        busy = client.get("/ui/ingest")
        with client.stream("GET", "/ui/ingest/events") as stream:
            lines = stream.iter_lines()
            sent = next(json.loads(line[6:]) for line in lines if line.startswith('data: {"done'))
    assert '<p id="embedding" hidden>' in quiet.text
    assert "search vectors: 40/100 vectors" in busy.text and 'max="100" value="40"' in busy.text
    assert (sent["done"], sent["total"]) == (70, 100) and sent["line"].startswith("search vectors")
