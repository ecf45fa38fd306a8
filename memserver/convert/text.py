"""Helpers the converters share: bytes to text, a title from a file name."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from memserver.convert.errors import ConversionError

_HYPHENATED = re.compile(r"(?<![\w-])\w+(?:-\w+)+(?![\w-])")
_LEADING_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T_ ]\d{2}[.:-]?\d{2}(?:[.:-]?\d{2})?)?[-_ ]*")


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 (a BOM allowed) text of a text-format original."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConversionError(
            f"{name} is not UTF-8 text (invalid byte at offset {exc.start})",
            "save it as UTF-8, e.g. iconv -f CP1251 -t UTF-8",
        ) from None


def title_from_name(name: str, text: str = "") -> str:
    """A title from a file name: no folders, extension or leading date; "-"/"_" as spaces,
    but words the ``text`` writes hyphenated stay so ("globex-go-live-retro" with "the
    go-live retro" in the text: "Globex go-live retro")."""
    stem = PurePosixPath(name).name
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    stem = _LEADING_DATE.sub("", stem) or stem
    words = stem.replace("_", " ").replace("-", " ").split()
    written = {w.casefold() for w in _HYPHENATED.findall(text)}
    out: list[str] = []
    for word in words:
        if out and f"{out[-1]}-{word}".casefold() in written:
            out[-1] = f"{out[-1]}-{word}"
        elif len(out) > 1 and f"{out[-2]}-{out[-1]}-{word}".casefold() in written:
            out[-2:] = [f"{out[-2]}-{out[-1]}-{word}"]
        else:
            out.append(word)
    title = " ".join(out) or stem
    return title[:1].upper() + title[1:]
