"""Bounds on the YAML we read: no alias bombs, no endless documents.

A few lines of YAML with anchors and aliases (``&a [x, x]``, ``&b [*a, *a]``, ...) stand
for billions of values once something walks them: validating, rendering or indexing
such a page pinned a CPU and grew the server past 2.6 GB. So:

- page frontmatter (and a source's) may not use anchors or aliases at all
  (:func:`check_no_aliases`; our own pages never contain them: the dumper writes none);
- ``schema.yaml`` may use them to reuse a block, but what it stands for is counted
  without expanding it (:func:`check_expansion`) and must stay under ``MAX_SCHEMA_NODES``;
- both are refused above a size (``MAX_FRONTMATTER_CHARS``, ``MAX_SCHEMA_CHARS``).

Violations are ``yaml.MarkedYAMLError``s, reported like any other YAML problem: with
the line and what to write instead.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_FRONTMATTER_CHARS = 100_000
MAX_SCHEMA_CHARS = 1_000_000
MAX_SCHEMA_NODES = 200_000


class YamlLimitError(yaml.MarkedYAMLError):
    """YAML refused for its aliases or its size (``problem`` says which and why)."""

    def __init__(self, problem: str, mark: Any = None) -> None:
        super().__init__(problem=problem, problem_mark=mark)


def check_size(text: str, limit: int, what: str) -> None:
    if len(text) > limit:
        raise YamlLimitError(
            f"the {what} is {len(text):,} characters, more than the {limit:,} allowed; "
            "keep it short and put long text in the page's sections"
        )


def check_no_aliases(text: str, loader: type[Any], what: str = "frontmatter") -> None:
    """YamlLimitError at the first anchor (``&name``) or alias (``*name``) in ``text``."""
    if "&" not in text and "*" not in text:
        return  # neither can occur (the common case costs one scan)
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise YamlLimitError(
                f"YAML anchors and aliases (&name, *name) are not allowed in {what}; "
                "write each value out",
                event.start_mark,
            )


def check_expansion(node: yaml.Node | None, limit: int = MAX_SCHEMA_NODES) -> None:
    """YamlLimitError when ``node`` stands for more than ``limit`` values once its aliases
    are expanded (counted on the shared nodes, never expanded)."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(node, False)] if node is not None else []
    while stack:
        current, done = stack.pop()
        key = id(current)
        if key in sizes:
            continue
        children = _children(current)
        if not done:
            if key in visiting:
                raise YamlLimitError(
                    "this YAML contains itself (an alias inside its own anchor); write it out",
                    current.start_mark,
                )
            visiting.add(key)
            stack.append((current, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        visiting.discard(key)
        total = 1 + sum(sizes[id(child)] for child in children)
        sizes[key] = total
        if total > limit:
            raise YamlLimitError(
                f"this YAML stands for more than {limit:,} values once its aliases (*name) "
                "are expanded; write the blocks out or reuse fewer of them",
                current.start_mark,
            )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
