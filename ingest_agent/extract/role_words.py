"""The words that say whether a job title is one person's or one of many, and which names
on an address are a team's or a role's, per language (data, not code): "Marcus Hale is Globex's new COO", "... is the COO at Globex" name the
one holder of the role (a newer holder closes the earlier one's claim,
:mod:`ingest_agent.pages.holders`); "joins as a Backend Engineer" names one of several."""

from __future__ import annotations

# determiners before a role that name its one holder
SOLE: dict[str, frozenset[str]] = {
    "en": frozenset({"the", "our", "their", "its", "his", "her"}),
}
# determiners before a role that name one of its holders
SHARED: dict[str, frozenset[str]] = {
    "en": frozenset({"a", "an", "another"}),
}
# words before a role that say its holder is new to it
NEW: dict[str, frozenset[str]] = {
    "en": frozenset({"new", "incoming", "newly appointed", "interim"}),
    "mn": frozenset({"шинэ", "шинээр томилогдсон"}),
}
# words of a name on an address that is a team's, a list's or a role's, not a person's
# ("Product Team <product@x>", "Engineering Lead <lead@x>")
UNPERSONAL: dict[str, frozenset[str]] = {
    "en": frozenset(
        {"team", "group", "list", "all", "everyone", "department", "staff", "committee",
         "board", "office", "desk", "manager", "lead", "director", "officer", "head",
         "engineering", "product", "sales", "support", "finance", "marketing",
         "operations", "ops", "hr", "admin", "noreply", "no-reply", "notifications"}
    ),
    "mn": frozenset({"баг", "хэлтэс", "алба", "менежер", "захирал", "бүгд"}),
}  # fmt: skip
ALL_UNPERSONAL = frozenset().union(*UNPERSONAL.values())
ALL_SOLE = frozenset().union(*SOLE.values())
ALL_SHARED = frozenset().union(*SHARED.values())
ALL_NEW = frozenset().union(*NEW.values())


def alternation(words: frozenset[str]) -> str:
    """A regex alternation of ``words``, longest first, each a whole word."""
    return "|".join(r"\s+".join(w.split()) for w in sorted(words, key=len, reverse=True))
