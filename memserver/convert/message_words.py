"""The words of a written message's frame, per language (data, not code).

- ``CLOSINGS``: what closes a message before its signature ("Best,", "Хүндэтгэсэн,"): the
  e-mail converter drops a message's signature from the first such line on
  (``memserver.convert.email_thread``), the ingest agent never reads one as a fact. Matched
  whole, case-folded, with a trailing comma or full stop gone.
- ``HEADERS``: the names of a mail's header lines as mail programs write them in a body (a
  forwarded message, a thread pasted as text): ``From:``, ``Von:``. A header line is never
  a fact nor a timeline line; ``SENDER`` and ``SENT`` name the sender's and the date's.
"""

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
HEADERS: dict[str, dict[str, str]] = {  # language -> header name -> what it holds
    "en": {"from": "sender", "to": "to", "cc": "cc", "bcc": "cc", "date": "sent",
           "sent": "sent", "subject": "subject", "reply-to": "to", "attachments": "files"},
    "de": {"von": "sender", "an": "to", "kopie": "cc", "datum": "sent", "gesendet": "sent",
           "betreff": "subject"},
    "fr": {"de": "sender", "à": "to", "date": "sent", "envoyé": "sent", "objet": "subject"},
    "mn": {"илгээгч": "sender", "хүлээн авагч": "to", "огноо": "sent", "гарчиг": "subject"},
}  # fmt: skip
ALL_HEADERS: dict[str, str] = {k: v for words in HEADERS.values() for k, v in words.items()}
SENDER, SENT = "sender", "sent"
SIGNATURE_MARK = "-- "  # the usual signature separator line (RFC 3676)
SIGNATURE_LINES = 6  # at most this many short lines follow a closing
SIGNATURE_LINE_WORDS = 8
