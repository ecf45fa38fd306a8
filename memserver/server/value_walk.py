"""Every string inside a tool result or a console view's data, read or changed in place.

Shared by redaction (``memserver.server.prose_scope``) and the note labels
(``memserver.server.source_names``): dicts, lists, tuples and dataclasses are walked,
anything else is left as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def strings(value: Any) -> Iterable[str]:
    """Every string inside ``value`` (dicts, lists, tuples, dataclasses, strings)."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            yield from strings(getattr(value, item.name))
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {
            f.name: map_strings(getattr(value, f.name), change) for f in dataclasses.fields(value)
        }
        return dataclasses.replace(value, **changed)
    if isinstance(value, Mapping):
        return {key: map_strings(item, change) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(map_strings(item, change) for item in value)
    return value
