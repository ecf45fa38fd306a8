"""The table from what a question asks to the handler that answers it.

The question is read once (:func:`read_agent.extractive.question.read`); each route says,
from that reading alone, whether it is asked, and names the one handler that answers
it. :class:`read_agent.extractive.answer.Extractive` builds the table from its parts (the
pages read, their ranking, the state on a day, the brief) and tries the routes the
reading asks for in order: the first that finds an answer gives it; when none does, the
sentences that hold the most of the question's words answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from read_agent.extractive.question import Reading
from read_agent.extractive.reply import Reply
from read_agent.reading import Kind, Wants
from read_agent.tools.wire import Hit, Page

Pages = Sequence[Page]


@dataclass(frozen=True)
class Asked:
    """What a handler is given: the reading, the search's results, the results that are
    pages the question names, and those pages read (the folder asked about first)."""

    reading: Reading
    results: list[Hit]
    named: list[Hit]
    pages: list[Page]


@dataclass(frozen=True)
class Route:
    """One kind of question (``asks``), when the reading asks it, and its handler."""

    asks: str
    applies: Callable[[Reading, Pages], bool]
    handler: Callable[[Asked], Awaitable[Reply | None]]
    needs_results: bool = True  # nothing to answer from when the search found nothing


def a_value(reading: Reading, pages: Pages) -> bool:
    """The pages whose field holds a value, and nothing else ("which companies are
    customers?")."""
    return reading.valued is not None


def a_window(reading: Reading, pages: Pages) -> bool:
    """Only a window (and folders): what is in it."""
    return reading.listing


def a_past_day(reading: Reading, pages: Pages) -> bool:
    """The state on a day ("as of 2026-09-01", "before it changed"), not an order."""
    return reading.as_of is not None and reading.order is None


def an_order(reading: Reading, pages: Pages) -> bool:
    """Latest, first or next."""
    return reading.order is not None


def the_current_state(reading: Reading, pages: Pages) -> bool:
    """ "Our current pricing": newer facts first, no day or order asked."""
    return (reading.soft or reading.current) and reading.order is None and reading.as_of is None


def a_named_page(reading: Reading, pages: Pages) -> bool:
    """A page the question names was found: its field or section may answer."""
    return bool(pages)


def who_or_what(reading: Reading, pages: Pages) -> bool:
    """A named page and nothing else asked of it, or who or what it is asked beside
    something no field says ("who's Alex Novak, and where does he work?"): its profile."""
    return (
        bool(pages)
        and (not reading.terms or reading.is_(Kind.PROFILE))
        and not reading.identifiers
        and reading.wants not in (Wants.AMOUNT, Wants.COUNT)
    )
