"""Words that close a message before its signature, per language (data, not code): the
e-mail converter drops a message's signature from the first such line on
(``memserver.convert.email_thread``). A closing is matched whole, case-folded, with its
trailing comma or full stop gone."""

from __future__ import annotations

CLOSINGS: dict[str, frozenset[str]] = {
    "en": frozenset(
        {"best", "best regards", "best wishes", "regards", "kind regards", "warm regards",
         "many thanks", "thanks", "thanks again", "thank you", "cheers", "sincerely",
         "yours sincerely", "yours truly", "all the best", "talk soon", "speak soon"}
    ),
    "mn": frozenset({"хүндэтгэсэн", "баярлалаа", "их баярлалаа", "амжилт хүсье"}),
    "de": frozenset({"viele grüße", "beste grüße", "mit freundlichen grüßen", "danke", "gruß"}),
    "fr": frozenset({"cordialement", "bien cordialement", "merci", "bien à vous"}),
}  # fmt: skip
ALL_CLOSINGS = frozenset().union(*CLOSINGS.values())
SIGNATURE_MARK = "-- "  # the usual signature separator line (RFC 3676)
SIGNATURE_LINES = 6  # at most this many short lines follow a closing
SIGNATURE_LINE_WORDS = 8
