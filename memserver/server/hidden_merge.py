"""A scoped writer's page with what it could not see put back.

A token with limited folders reads pages redacted (``memserver.server.prose_scope``:
references to hidden pages shown as ``[redacted]`` or left out) and without the link
fields into hidden folders. It writes whole pages back, so before its page is stored
:func:`restore_hidden` merges every hidden value of the stored page into it:

- a link field into a hidden folder: kept as stored (a different value is refused);
- a text (section, field, timeline entry, open question, source, alias): the writer's
  edit of the shown text is applied to the stored text, token by token, and every
  hidden span whose shown text the writer left as it was goes back in its place;
- a list item the writer never saw (a source path that is a hidden page): kept.

Lines and list items that would read the same once redacted (five timeline lines
``Decision [redacted]`` of one day and source, two open questions about two hidden
decisions) are shown numbered, ``[redacted 1]`` ... ``[redacted 5]``: a page keeps one
copy of identical lines, so unnumbered they would reach the writer once and its write
could not say which hidden original each stands for. The number is the item's place
among those that read the same, in the stored page the write is based on (the base
version), so it finds the same original on the way back.

What cannot be put back (the writer rewrote or removed a ``[redacted]`` span, or the
text around a reference it could not see) is listed in ``lost``: the write is then
refused, naming each place, and nothing is written.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memserver.kb.page import Page, TimelineEntry
from memserver.server.prose_scope import REDACTED, Hidden, Piece
from memserver.server.prose_scope import apply as _apply

DIFF_TOKENS = 2_000  # the most of a changed middle compared token by token
MAX_CANDIDATES = 100  # new list items tried as the edit of one hidden item
_TOKEN = re.compile(r"[^\W_]+|.", re.DOTALL)  # words, and every other character alone


@dataclass
class Merged:
    """The writer's page with hidden values back, and what could not be kept."""

    page: Page
    lost: list[str] = field(default_factory=list)


def merge_text(original: str, pieces: Sequence[Piece], new: str) -> tuple[str, bool]:
    """``new`` (an edit of ``original`` as shown with ``pieces`` hidden) with the hidden
    spans put back; False when some piece could not be (its shown text or the text it
    is anchored to was changed)."""
    if not pieces:
        return new, True
    new = _same_edges(_apply(original, pieces), new)
    shown_tokens, owners, anchors = _shown_tokens(original, pieces)
    new_tokens = [(m.group(0), m.start()) for m in _TOKEN.finditer(new)]
    opcodes = _opcodes([t for t, _ in shown_tokens], [t for t, _ in new_tokens])
    out: list[str] = []
    kept: set[int] = set()
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for n, owner in enumerate(owners):
        if owner is not None:
            first.setdefault(owner, n)
            last[owner] = n
    for op, i1, i2, j1, j2 in opcodes:
        if op != "equal":
            if j2 > j1:
                out.append(
                    new[new_tokens[j1][1] : new_tokens[j2 - 1][1] + len(new_tokens[j2 - 1][0])]
                )
            continue
        k = i1
        while k < i2:
            for index in anchors.get(k, ()):
                out.append(original[pieces[index].start : pieces[index].end])
                kept.add(index)
            owner = owners[k]
            if owner is None:
                out.append(shown_tokens[k][0])
                k += 1
                continue
            if first[owner] == k and last[owner] < i2:
                out.append(original[pieces[owner].start : pieces[owner].end])
                kept.add(owner)
                k = last[owner] + 1
            else:
                out.append(shown_tokens[k][0])
                k += 1
        if i2 == len(shown_tokens):
            for index in anchors.get(i2, ()):
                out.append(original[pieces[index].start : pieces[index].end])
                kept.add(index)
    return "".join(out), len(kept) == len(pieces)


def _same_edges(shown: str, new: str) -> str:
    """``new`` with the blank lines and trailing whitespace of ``shown`` around it: a page
    drops them from a section (so the writer never had them), yet a hidden reference
    shown as nothing may stand just inside them."""
    if not shown.strip() or not new.strip():
        return new
    lead, trail = _blank_lines(shown), shown[len(shown.rstrip()) :]
    return lead + new[len(_blank_lines(new)) :].rstrip() + trail


def _blank_lines(text: str) -> str:
    """The blank lines ``text`` starts with (not the first line's indent)."""
    space = text[: len(text) - len(text.lstrip())]
    return space[: space.rfind("\n") + 1]


def _opcodes(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """How ``b`` differs from ``a`` (``SequenceMatcher`` opcodes): the common start and
    end are found in linear time and only the middle is compared, unless it is longer
    than ``DIFF_TOKENS`` on a side (then it counts as replaced whole: bounded work for
    any text a writer sends)."""
    n = min(len(a), len(b))
    head = 0
    while head < n and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    a_end, b_end = len(a) - tail, len(b) - tail
    ops: list[tuple[str, int, int, int, int]] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    if a_end > head or b_end > head:
        if max(a_end, b_end) - head <= DIFF_TOKENS:
            middle = difflib.SequenceMatcher(None, a[head:a_end], b[head:b_end], autojunk=False)
            ops.extend(
                (op, i1 + head, i2 + head, j1 + head, j2 + head)
                for op, i1, i2, j1, j2 in middle.get_opcodes()
            )
        else:
            ops.append(("replace", head, a_end, head, b_end))
    if tail:
        ops.append(("equal", a_end, len(a), b_end, len(b)))
    return ops


def _shown_tokens(
    original: str, pieces: Sequence[Piece]
) -> tuple[list[tuple[str, int]], list[int | None], dict[int, list[int]]]:
    """The shown text's tokens (text, position), which piece each belongs to (None: text
    shown as stored), and the pieces shown as nothing, by the token they stand before."""
    tokens: list[tuple[str, int]] = []
    owners: list[int | None] = []
    empty: list[int] = []
    at = shown_at = 0

    def cut(text: str, owner: int | None) -> None:
        nonlocal shown_at
        for m in _TOKEN.finditer(text):
            tokens.append((m.group(0), shown_at + m.start()))
            owners.append(owner)
        shown_at += len(text)

    anchors: dict[int, list[int]] = {}
    for index, piece in enumerate(pieces):
        cut(original[at : piece.start], None)
        if piece.shown:
            cut(piece.shown, index)
        else:
            empty.append(index)
            anchors.setdefault(len(tokens), []).append(index)
        at = piece.end
    cut(original[at:], None)
    return tokens, owners, anchors


def _text(hidden: Hidden, stored: str, new: str) -> tuple[str, bool]:
    return merge_text(stored, hidden.pieces(stored), new)


@dataclass(frozen=True)
class _Shown:
    """A stored text as a scoped caller reads it, and the number that tells it from
    others that read the same (``mark``, empty when none does)."""

    text: str
    original: str
    mark: str = ""
    appended: bool = False  # the mark follows the text (it showed no ``[redacted]``)

    def unmarked(self, written: str) -> str | None:
        """What the writer wrote for this text with its number taken out; None when the
        number is not there (the text stands for another original)."""
        if not self.mark:
            return written
        if self.mark not in written:
            return None
        return " ".join(written.replace(self.mark, "" if self.appended else REDACTED).split())


def _numbered(keys: Sequence[Any], texts: Sequence[str]) -> list[tuple[str, str, bool]]:
    """Each text with a number when another item's key is the same (see the module
    docstring): (text as shown, its mark, whether the mark was appended)."""
    count: dict[Any, int] = {}
    for key in keys:
        count[key] = count.get(key, 0) + 1
    seen: dict[Any, int] = {}
    out: list[tuple[str, str, bool]] = []
    for key, text in zip(keys, texts, strict=True):
        if count[key] < 2 or not text:
            out.append((text, "", False))
            continue
        seen[key] = n = seen.get(key, 0) + 1
        mark = f"[redacted {n}]"
        at = text.rfind(REDACTED)
        if at >= 0:
            out.append((text[:at] + mark + text[at + len(REDACTED) :], mark, False))
        else:
            out.append((f"{text} {mark}", mark, True))
    return out


def _shown_items(hidden: Hidden, stored: Sequence[str]) -> list[_Shown]:
    views = [" ".join(hidden.text(s).split()) for s in stored]
    return [
        _Shown(text, original, mark, appended)
        for original, (text, mark, appended) in zip(stored, _numbered(views, views), strict=True)
    ]


def _items(
    hidden: Hidden, stored: Sequence[str], new: Sequence[str], where: str, lost: list[str]
) -> list[str]:
    """A list of texts: items shown and kept come back as stored, edited ones merged,
    items the writer never saw (shown as nothing) kept."""
    shown = _shown_items(hidden, stored)
    waiting: dict[str, list[int]] = {}
    for at, view in enumerate(shown):
        if view.text:
            waiting.setdefault(view.text, []).append(at)
    out: list[tuple[str, int | None]] = []  # (text, the stored item it is) in order
    for item in new:
        queue = waiting.get(" ".join(item.split()))
        if queue:
            at = queue.pop(0)
            out.append((stored[at], at))
        else:
            out.append((item, None))
    kept = {at for _, at in out if at is not None}
    for at, original in enumerate(stored):
        if at in kept or not hidden.pieces(original):
            continue
        view = shown[at]
        if not view.text:  # never shown: kept after the item it followed
            before = max(
                (n for n, (_, a) in enumerate(out) if a is not None and a < at), default=-1
            )
            out.insert(before + 1, (original, at))
            continue
        fresh = [n for n, (_, a) in enumerate(out) if a is None]
        merged = _best(hidden, view, [(n, out[n][0]) for n in fresh])
        if merged is None:
            lost.append(f"{where}: {view.text!r}")
        else:
            out[merged[0]] = (merged[1], at)
    return [text for text, _ in out]


def _best(
    hidden: Hidden, view: _Shown, candidates: Sequence[tuple[int, str]]
) -> tuple[int, str] | None:
    """The candidate that is an edit of ``view``'s original as shown, merged (its place
    and text); None if none is."""
    plain = hidden.text(view.original)
    unmarked = [
        (n, t) for n, c in candidates[:MAX_CANDIDATES] if (t := view.unmarked(c)) is not None
    ]
    ranked = sorted(  # the likeliest edits first (bounded: a writer may send thousands)
        unmarked,
        key=lambda c: difflib.SequenceMatcher(None, plain, c[1]).quick_ratio(),
        reverse=True,
    )
    for n, candidate in ranked[:3]:
        text, whole = _text(hidden, view.original, candidate)
        if whole:
            return n, text
    return None


def restore_hidden(
    new: Page, stored: Page, hidden: Hidden | None, hidden_fields: Sequence[str]
) -> Merged:
    """``new``, written by a scoped writer from ``stored`` as shown to it, with every
    hidden value of ``stored`` put back (see the module docstring)."""
    lost: list[str] = []
    fields = dict(new.fields)
    for name in hidden_fields:
        if name in stored.fields:
            if name in fields and _plain(fields[name]) != _plain(stored.fields[name]):
                lost.append(f"field {name!r} (it links to pages you cannot see)")
            fields[name] = stored.fields[name]
        elif name in fields:
            lost.append(f"field {name!r} (it links to pages you cannot see)")
    if hidden is None:
        return Merged(dataclasses.replace(new, fields=fields), lost)
    for name, value in stored.fields.items():
        if name in hidden_fields:
            continue
        if name not in fields:
            if any(hidden.pieces(s) for s in _texts(value)):
                if any(hidden.text(s).strip() for s in _texts(value)):
                    lost.append(f"field {name!r}")
                else:
                    fields[name] = value  # shown as nothing: the writer never saw it
            continue
        fields[name] = _field(hidden, value, fields[name], f"field {name!r}", lost)
    sections: dict[str, str] = dict(new.sections)
    for heading, body in stored.sections.items():
        if not hidden.pieces(body):
            continue
        if heading not in sections:
            if hidden.text(body).strip():
                lost.append(f"section {heading!r}")
            else:
                sections[heading] = body  # shown as nothing: the writer never saw it
            continue
        text, whole = _text(hidden, body, sections[heading])
        if not whole:
            lost.append(f"section {heading!r}")
        sections[heading] = text
    return Merged(
        dataclasses.replace(
            new,
            fields=fields,
            sections=sections,
            aliases=tuple(_items(hidden, stored.aliases, new.aliases, "alias", lost)),
            sources=tuple(_items(hidden, stored.sources, new.sources, "source", lost)),
            open_questions=tuple(
                _items(hidden, stored.open_questions, new.open_questions, "open question", lost)
            ),
            timeline=_timeline(hidden, stored.timeline, new.timeline, lost),
        ),
        lost,
    )


def _field(hidden: Hidden, stored: Any, new: Any, where: str, lost: list[str]) -> Any:
    if isinstance(stored, str) and isinstance(new, str) and hidden.pieces(stored):
        text, whole = _text(hidden, stored, new)
        if not whole:
            lost.append(where)
        return text
    if (
        isinstance(stored, list | tuple)
        and isinstance(new, list | tuple)
        and all(isinstance(v, str) for v in (*stored, *new))
    ):
        return tuple(_items(hidden, list(stored), list(new), where, lost))
    return new


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def _shown_entries(
    hidden: Hidden, stored: Sequence[TimelineEntry]
) -> list[tuple[tuple[str, str, str | None], _Shown]]:
    """Each stored entry's key as shown (date, text, source) and its text as shown."""
    keys = [
        (
            e.date.isoformat(),
            entry_text(hidden, e.text),
            (hidden.text(e.source) if e.source else None) or None,
        )
        for e in stored
    ]
    out = []
    for entry, key, (text, mark, appended) in zip(
        stored, keys, _numbered(keys, [k[1] for k in keys]), strict=True
    ):
        out.append(((key[0], text, key[2]), _Shown(text, entry.text, mark, appended)))
    return out


def _timeline(
    hidden: Hidden,
    stored: Sequence[TimelineEntry],
    new: Sequence[TimelineEntry],
    lost: list[str],
) -> tuple[TimelineEntry, ...]:
    """Entries as shown come back as stored; an edited entry (same date) is merged."""
    shown = _shown_entries(hidden, stored)
    waiting: dict[tuple[str, str, str | None], list[int]] = {}
    for at, (key, _) in enumerate(shown):
        waiting.setdefault(key, []).append(at)
    out = list(new)
    matched: set[int] = set()
    kept: set[int] = set()
    for n, entry in enumerate(new):
        queue = waiting.get(_key(entry))
        if queue:
            at = queue.pop(0)
            out[n] = stored[at]
            matched.add(n)
            kept.add(at)
    for at, original in enumerate(stored):
        if at in kept or not (hidden.pieces(original.text) or hidden.pieces(original.source or "")):
            continue
        (_, _, source), view = shown[at]
        for n, entry in enumerate(new):
            if n in matched or entry.date != original.date:
                continue
            written = view.unmarked(entry.text)
            if written is None or (entry.source or None) != source:
                continue
            text, whole = _text(hidden, original.text, written)
            if whole:
                out[n] = TimelineEntry(original.date, text, original.source)
                matched.add(n)
                break
        else:
            lost.append(f"timeline entry of {original.date.isoformat()}: {view.text!r}")
    return tuple(out)


def entry_text(hidden: Hidden, text: str) -> str:
    """A timeline entry's text as shown (never empty: an entry must say something)."""
    return " ".join(hidden.text(text).split()) or REDACTED


def _key(entry: TimelineEntry) -> tuple[str, str, str | None]:
    return entry.date.isoformat(), " ".join(entry.text.split()), entry.source or None


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def shown_page(page: Page, hidden: Hidden | None, hidden_fields: Sequence[str]) -> Page:
    """``page`` as a scoped caller reads it: hidden link fields left out, references
    redacted, list items that show nothing dropped (so its markdown stays valid), and
    items that would read the same numbered (see the module docstring)."""
    fields = {k: v for k, v in page.fields.items() if k not in hidden_fields}
    if hidden is None:
        return dataclasses.replace(page, fields=fields)

    def items(values: Sequence[str]) -> tuple[str, ...]:
        return tuple(v.text for v in _shown_items(hidden, values) if v.text)

    def value(v: Any) -> Any:
        if isinstance(v, list | tuple) and all(isinstance(x, str) for x in v):
            return tuple(t.text for t in _shown_items(hidden, v) if t.text)
        return hidden.value(v)

    return dataclasses.replace(
        page,
        fields={k: value(v) for k, v in fields.items()},
        aliases=items(page.aliases),
        sources=items(page.sources),
        sections=hidden.value(dict(page.sections)),
        open_questions=items(page.open_questions),
        timeline=tuple(
            TimelineEntry(original.date, key[1], key[2])
            for original, (key, _) in zip(
                page.timeline, _shown_entries(hidden, page.timeline), strict=True
            )
        ),
    )
