"""Slack workspace exports (a folder or ``.zip`` of ``users.json``, ``channels.json`` and
``<channel>/<YYYY-MM-DD>.json``): one note per channel and day.

Messages are dated by their ``ts`` (UTC) and attributed by ``users.json``'s real names
(``<@U123>`` mentions too). A thread stays together: its replies are listed under their
parent, on the parent's day, whatever day they were written. Slack escapes ``<``, ``>``
and ``&`` in message text; they are unescaped, so a ``<private>`` span a user wrote is
redacted by the usual rules. Private channels, group and direct messages
(``groups.json``, ``mpims.json``, ``dms.json``) are kept whole inside ``<private>``.
Files shared in a message are named, never fetched.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memserver.convert import budget
from memserver.convert.errors import ConversionError
from memserver.convert.note import Note, slug

_DAY_FILE = re.compile(r"^(?:.*/)?([^/]+)/(\d{4}-\d{2}-\d{2})\.json$")
_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]+))?>")
_SPECIAL = re.compile(r"<!(here|channel|everyone)[^>]*>")
PRIVATE_LISTS = ("groups.json", "mpims.json", "dms.json")


@dataclass(frozen=True)
class _Message:
    ts: float
    thread: float | None
    who: str
    text: str


def convert_slack(files: Mapping[str, bytes], name: str) -> list[Note]:
    """One note per channel and day of an export given as ``{path in it: bytes}``."""
    prefix = _export_root(files, name)
    users = _users(_json(files, prefix + "users.json", name))
    private: set[str] = set()
    for listed in PRIVATE_LISTS:
        if prefix + listed in files:
            private |= {
                str(c.get("name") or c.get("id")) for c in _json(files, prefix + listed, name)
            }
    channels: dict[str, list[_Message]] = {}
    for path in sorted(files):
        match = _DAY_FILE.match(path)
        if not path.startswith(prefix) or match is None:
            continue
        for raw in _json(files, path, name):
            message = _message(raw, users)
            if message is not None:
                channels.setdefault(match.group(1), []).append(message)
    if not channels:
        raise ConversionError(
            f"{name} holds no channel messages (<channel>/<YYYY-MM-DD>.json)",
            "export the workspace again from Slack (Settings > Import/export data)",
        )
    notes: list[Note] = []
    for channel in sorted(channels):
        notes.extend(_channel_notes(channel, channels[channel], channel in private))
    return notes


def _export_root(files: Mapping[str, bytes], name: str) -> str:
    """The folder inside the export that holds ``users.json`` ("" at its top)."""
    found = sorted((p for p in files if p.rsplit("/", 1)[-1] == "users.json"), key=len)
    if not found:
        raise ConversionError(
            f"{name} is not a Slack export: it has no users.json",
            "pass the folder or .zip that Slack's export gave (it holds users.json)",
        )
    return found[0].removesuffix("users.json")


def _json(files: Mapping[str, bytes], path: str, name: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(files[path].decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConversionError(
            f"{name}: {path} is not valid JSON ({exc})", "export the workspace again"
        ) from None
    if not isinstance(data, list):
        raise ConversionError(
            f"{name}: {path} is not a JSON list", "export the workspace again from Slack"
        )
    return [item for item in data if isinstance(item, dict)]


def _users(rows: list[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for row in rows:
        profile: dict[str, Any] = row["profile"] if isinstance(row.get("profile"), dict) else {}
        real = row.get("real_name") or profile.get("real_name") or profile.get("display_name")
        out[str(row.get("id"))] = " ".join(str(real or row.get("name") or row.get("id")).split())
    return out


def _message(raw: dict[str, Any], users: Mapping[str, str]) -> _Message | None:
    if raw.get("type") != "message" or raw.get("subtype") in ("channel_join", "channel_leave"):
        return None
    try:
        ts = float(raw["ts"])
        thread = float(raw["thread_ts"]) if raw.get("thread_ts") else None
    except (KeyError, TypeError, ValueError):
        return None
    profile: dict[str, Any] = (
        raw["user_profile"] if isinstance(raw.get("user_profile"), dict) else {}
    )
    who = users.get(str(raw.get("user"))) or profile.get("real_name") or raw.get("username")
    text = _MENTION.sub(
        lambda m: "@" + users.get(m.group(1), m.group(1)), str(raw.get("text") or "")
    )
    text = _LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})" if m.group(2) else m.group(1), text)
    text = html.unescape(_SPECIAL.sub(lambda m: "@" + m.group(1), text))
    shared = [
        str(f.get("name") or f.get("title")) for f in raw.get("files") or () if isinstance(f, dict)
    ]
    if shared:
        text = f"{text}\n(files shared, not fetched: {', '.join(shared)})".strip()
    if not text.strip():
        return None
    return _Message(ts, thread if thread != ts else None, str(who or "Unknown user"), text.strip())


def _channel_notes(channel: str, messages: list[_Message], private: bool) -> list[Note]:
    by_ts = {m.ts: m for m in messages}
    replies: dict[float, list[_Message]] = {}
    tops: list[_Message] = []
    for message in sorted(messages, key=lambda m: m.ts):
        if message.thread is not None and message.thread in by_ts:
            replies.setdefault(message.thread, []).append(message)
        else:
            tops.append(message)
    days: dict[dt.date, list[_Message]] = {}
    for message in tops:
        days.setdefault(_when(message.ts).date(), []).append(message)
    notes = []
    for day, day_tops in sorted(days.items()):
        lines: list[str] = []
        people: list[str] = []
        for top in day_tops:
            lines.append(_line(top, day, ""))
            people.append(top.who)
            for reply in replies.get(top.ts, ()):
                lines.append(_line(reply, day, "↳ "))
                people.append(reply.who)
        body = "\n\n".join(lines)
        if private:
            body = f"<private>\n{body}\n</private>"
        budget.current().note(body)  # stops an export of too many notes or too much text
        notes.append(
            Note(
                f"#{channel} — {day.isoformat()}",
                body,
                day,
                None,
                tuple(dict.fromkeys(people)),
                f"{slug(channel)}/{day.isoformat()}",
                {"channel": channel},
            )
        )
    return notes


def _when(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.UTC)


def _line(message: _Message, day: dt.date, mark: str) -> str:
    when = _when(message.ts)
    shown = when.strftime("%H:%M") if when.date() == day else when.strftime("%Y-%m-%d %H:%M")
    return f"{mark}**{message.who}** {shown}\n{message.text}"
