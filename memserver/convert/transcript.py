"""Meeting transcripts (WebVTT ``.vtt`` from Zoom, Teams or Meet, SubRip ``.srt``), read
by ``webvtt-py``: one note per transcript.

Each cue becomes a line (its markup gone, a ``<private>`` span kept) ``Speaker: words``. The speaker is the cue's ``<v Name>`` voice,
else a leading ``Name:`` the cue itself writes; cues of one speaker in a row are joined.
The speakers are the note's attendees. Its date is the one in the file's name, else the
first ISO date in the header's NOTE lines or the first cue (none: the manifest falls
back to the file's own date); its title is the name without date and extension.
"""

from __future__ import annotations

import html
import io
import re

from memserver.convert.errors import ConversionError
from memserver.convert.note import Note, iso_day
from memserver.convert.text import decode_text, title_from_name

# Cue markup (voices, classes, timestamps) goes; <private> spans stay for the redaction.
_CUE_TAG = re.compile(r"<(?!/?private\b)[^>]*>", re.IGNORECASE)
_NAME_CUE = re.compile(r"^([^\W\d][\w.'’ -]{0,60}?):\s+(.*)$", re.DOTALL)


def convert_transcript(name: str, data: bytes, kind: str) -> list[Note]:
    """The note of one ``.vtt`` (``kind`` "vtt") or ``.srt`` ("srt") transcript."""
    import webvtt
    from webvtt.errors import MalformedFileError

    text = decode_text(data, name)
    try:
        captions = webvtt.from_buffer(io.StringIO(text), format=kind)
    except (MalformedFileError, ValueError, IndexError) as exc:
        raise ConversionError(
            f"not a valid {kind.upper()} transcript ({exc})",
            "export the transcript again from the meeting tool",
        ) from None
    turns: list[tuple[str | None, str]] = []
    for caption in captions.captions:
        words = " ".join(html.unescape(_CUE_TAG.sub("", caption.raw_text)).split())
        speaker = caption.voice
        if speaker is None and (match := _NAME_CUE.match(words)):
            speaker, words = match.group(1).strip(), match.group(2).strip()
        if not words:
            continue
        if turns and turns[-1][0] == speaker and speaker is not None:
            turns[-1] = (speaker, f"{turns[-1][1]} {words}")
        else:
            turns.append((speaker, words))
    if not turns:
        raise ConversionError(
            f"the {kind.upper()} transcript has no spoken text", "check the file is a transcript"
        )
    header = " ".join(getattr(captions, "header_comments", None) or ())
    day = iso_day(name) or iso_day(header) or iso_day(turns[0][1])
    speakers = tuple(dict.fromkeys(s for s, _ in turns if s))
    body = "\n\n".join(f"{s}: {w}" if s else w for s, w in turns)
    return [Note(title_from_name(name, body), body, day, None, speakers)]
