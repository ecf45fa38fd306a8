"""The page file: ``render_page`` and ``parse_page``, and the one import point for pages.

A page on disk::

    ---
    title: Bob Martinez
    type: person
    role: VP of Operations          # schema fields, in schema order
    aliases: [Bob]
    sources: [2026-09-23-globex-update.md]
    ---

    ## Summary                      # compiled-truth sections, in schema order
    Bob Martinez is VP of Operations at Globex ...

    ## Timeline                     # append-only evidence, newest first
    - **2026-09-23** | Promoted to VP of Operations. [source: 2026-09-23-globex-update.md]

    ## Open Questions
    - Two sources disagree on his start date.

``parse_page(render_page(p)) == p`` for every page, and rendering is deterministic.
Two normalisations make that possible: :class:`Page` tidies its values when built
(:mod:`memserver.kb.page_model`), and a body line that would read as a ``## `` heading is
written with one more leading backslash (``\\## ``) and read back without it.

The page's pieces live in their own modules and are re-exported here, so callers import
page things from ``memserver.kb.page``: the values (:mod:`memserver.kb.page_model`), what a
folder requires of a page (:mod:`memserver.kb.page_rules`: validate, slug, effective date),
and the index chunks (:mod:`memserver.kb.chunks`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

from memserver.errors import PageValidationError, Problem
from memserver.kb.chunks import FIELDS_SECTION, Chunk, chunk_page, content_hash, drop_field_lines
from memserver.kb.frontmatter import as_date, date_in_name, dump_yaml, frontmatter_end, load_yaml
from memserver.kb.layout import slugify
from memserver.kb.page_model import (
    OPEN_QUESTIONS,
    TIMELINE,
    Page,
    TimelineEntry,
    add_timeline_entries,
)
from memserver.kb.page_rules import (
    DATE_FIELDS,
    check_page,
    effective_date,
    folder_json_schema,
    page_slug,
    validate_page,
)
from memserver.kb.problems import yaml_syntax_problem
from memserver.kb.schema import FolderSpec

__all__ = [
    "DATE_FIELDS",
    "FIELDS_SECTION",
    "OPEN_QUESTIONS",
    "TIMELINE",
    "Chunk",
    "Page",
    "TimelineEntry",
    "add_timeline_entries",
    "as_date",
    "check_page",
    "chunk_page",
    "content_hash",
    "date_in_name",
    "drop_field_lines",
    "effective_date",
    "folder_json_schema",
    "page_slug",
    "parse_page",
    "render_page",
    "slugify",
    "validate_page",
]

_HEADING = re.compile(r"^##(?:[ \t]|$)")
_ESCAPED_HEADING = re.compile(r"^\\+##(?:[ \t]|$)")
_TIMELINE_LINE = re.compile(
    r"^- \*\*(\d{4}-\d{2}-\d{2})\*\* \|[ ]??(.*?)(?: \[source: ([^\]\n]+)\])?$"
)


# --- render ----------------------------------------------------------------------------


def _ordered(keys: Iterable[str], order: Iterable[str]) -> list[str]:
    present = list(keys)
    first = [k for k in order if k in present]
    return first + sorted(k for k in present if k not in first)


def _escape_body(body: str) -> str:
    return "\n".join(
        "\\" + line if _HEADING.match(line) or _ESCAPED_HEADING.match(line) else line
        for line in body.split("\n")
    )


def _unescape_body(body: str) -> str:
    return "\n".join(
        line[1:] if _ESCAPED_HEADING.match(line) else line for line in body.split("\n")
    )


def render_page(page: Page, folder: FolderSpec | None = None) -> str:
    """The page as markdown; the same page always gives the same text.

    With a folder, fields and sections follow the schema's order (anything else comes
    after, sorted); without one, the page's own order.
    """
    field_order = [f.name for f in folder.fields] if folder else list(page.fields)
    section_order = list(folder.sections) if folder else list(page.sections)
    front: dict[str, Any] = {"title": page.title, "type": page.type}
    for key in _ordered(page.fields, field_order):
        front[key] = page.fields[key]
    if page.aliases:
        front["aliases"] = page.aliases
    if page.sources:
        front["sources"] = page.sources
    blocks = [
        f"## {heading}\n{_escape_body(page.sections[heading])}"
        for heading in _ordered(page.sections, section_order)
    ]
    if page.timeline:
        blocks.append(f"## {TIMELINE}\n" + "\n".join(e.render() for e in page.timeline))
    if page.open_questions:
        blocks.append(f"## {OPEN_QUESTIONS}\n" + "\n".join(f"- {q}" for q in page.open_questions))
    text = f"---\n{dump_yaml(front)}---\n"
    if blocks:
        text += "\n" + "\n\n".join(blocks) + "\n"
    return text


# --- parse -----------------------------------------------------------------------------


def parse_page(text: str, source: str = "page") -> Page:
    """Read a page; raises PageValidationError listing every structural problem.

    ``source`` names the page in error messages (e.g. ``knowledge/people/bob.md``).
    """
    lines = text.replace("\r\n", "\n").removeprefix("\ufeff").split("\n")
    end = frontmatter_end(lines)
    if not lines or lines[0].rstrip() != "---":
        raise PageValidationError(
            [
                Problem(
                    "frontmatter",
                    "the page does not start with '---'",
                    "begin with YAML frontmatter between '---' lines",
                    1,
                )
            ],
            source,
        )
    if end is None:
        raise PageValidationError(
            [
                Problem(
                    "frontmatter", "the frontmatter is not closed", "end it with a line '---'", 1
                )
            ],
            source,
        )
    problems: list[Problem] = []
    # Each line keeps its newline: a block scalar's final newline is part of its value.
    front = _parse_frontmatter("".join(f"{line}\n" for line in lines[1:end]), problems, source)
    blocks = _split_blocks(lines, end + 1, problems)
    sections: dict[str, str] = {}
    timeline: list[TimelineEntry] = []
    questions: list[str] = []
    for heading, line_no, body in blocks:
        if heading == TIMELINE:
            timeline.extend(_parse_timeline(body, line_no, problems))
        elif heading == OPEN_QUESTIONS:
            questions.extend(_parse_bullets(body, line_no, problems))
        else:
            sections[heading] = _unescape_body("\n".join(body))
    if problems:
        raise PageValidationError(problems, source)
    title, page_type = front.pop("title"), front.pop("type")
    aliases, sources = front.pop("aliases", ()), front.pop("sources", ())
    return Page(
        title=title,
        type=page_type,
        fields=front,
        aliases=aliases,
        sources=sources,
        sections=sections,
        timeline=tuple(timeline),
        open_questions=tuple(questions),
    )


def _parse_frontmatter(text: str, problems: list[Problem], source: str) -> dict[str, Any]:
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        # The frontmatter starts on the file's line 2, after the opening ``---``.
        raise PageValidationError([yaml_syntax_problem(exc, "frontmatter", 2)], source) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PageValidationError(
            [
                Problem(
                    "frontmatter", "the frontmatter is not a mapping", "write key: value lines", 2
                )
            ],
            source,
        )
    out: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            problems.append(
                Problem(f"frontmatter.{key}", "keys must be text", f'quote it: "{key}"')
            )
            continue
        out[key] = value
    for key in ("title", "type"):
        value = out.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            problems.append(
                Problem(key, f"the page has no {key}", f"add `{key}:` to the frontmatter")
            )
        elif isinstance(value, dict | list):
            problems.append(Problem(key, f"{key} must be text", f"write `{key}: <text>`"))
        else:
            out[key] = str(value)
    for key in ("aliases", "sources"):
        value = out.get(key)
        if value is None:
            out.pop(key, None)
        elif isinstance(value, str):
            out[key] = (value,)
        elif isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
            out[key] = tuple(str(v) for v in value)
        else:
            problems.append(Problem(key, f"{key} must be a list of text", f"write `{key}: [a, b]`"))
    return out


def _split_blocks(
    lines: list[str], start: int, problems: list[Problem]
) -> list[tuple[str, int, list[str]]]:
    blocks: list[tuple[str, int, list[str]]] = []
    seen: set[str] = set()
    for index in range(start, len(lines)):
        line = lines[index]
        if _HEADING.match(line):
            heading = " ".join(line[2:].split())
            if heading in seen:
                problems.append(
                    Problem(
                        f"sections.{heading}",
                        f"heading '## {heading}' appears twice",
                        "merge the two sections",
                        index + 1,
                    )
                )
            seen.add(heading)
            blocks.append((heading, index + 1, []))
        elif blocks:
            blocks[-1][2].append(line)
        elif line.strip():
            problems.append(
                Problem(
                    "body",
                    "text before the first '## ' heading",
                    "move it under a section such as '## Summary'",
                    index + 1,
                )
            )
    return blocks


def _parse_timeline(
    body: list[str], heading_line: int, problems: list[Problem]
) -> list[TimelineEntry]:
    entries = []
    for offset, line in enumerate(body, start=1):
        if not line.strip():
            continue
        match = _TIMELINE_LINE.match(line.rstrip())
        date = as_date(match.group(1)) if match else None
        if match is None or date is None:
            problems.append(
                Problem(
                    "timeline",
                    f"not a timeline line: {line.strip()[:80]!r}",
                    "write `- **YYYY-MM-DD** | what happened [source: file.md]`",
                    heading_line + offset,
                )
            )
            continue
        entries.append(TimelineEntry(date, match.group(2), match.group(3)))
    return entries


def _parse_bullets(body: list[str], heading_line: int, problems: list[Problem]) -> list[str]:
    items = []
    for offset, line in enumerate(body, start=1):
        if not line.strip():
            continue
        if line.startswith("- "):
            items.append(line[2:])
        else:
            problems.append(
                Problem(
                    "open_questions",
                    f"not a bullet: {line.strip()[:80]!r}",
                    "start each question with '- '",
                    heading_line + offset,
                )
            )
    return items
