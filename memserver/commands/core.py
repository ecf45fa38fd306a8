"""`memserver schema-check` and `memserver page-check`."""

from __future__ import annotations

import argparse
from pathlib import Path

from memserver.errors import PageValidationError, Problem, SchemaError, UserError
from memserver.kb.layout import KBPaths
from memserver.kb.trust import Level, TrustRules
from memserver.terminal.output import print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this area's subcommands to the `memserver` parser."""
    check = sub.add_parser(
        "schema-check",
        help="validate the knowledge base's schema.yaml (every problem at once)",
        description="Validate schema.yaml against the meta-schema and the semantic rules; "
        "prints every problem with its location, YAML line and fix.",
    )
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(func=run_schema_check)

    page = sub.add_parser(
        "page-check",
        help="validate a page file against its folder in the schema",
        description="Parse a markdown page and validate it against its folder. The folder "
        "comes from the path (knowledge/<folder>/<slug>.md) unless --folder is given.",
    )
    page.add_argument("file", help="the page's markdown file")
    page.add_argument("--folder", help="the schema folder to validate against")
    page.add_argument("--json", action="store_true", help="print JSON")
    page.set_defaults(func=run_page_check)


def run_schema_check(args: argparse.Namespace) -> int:
    from memserver.kb.schema import load_schema

    paths = KBPaths.of(args.kb)
    try:
        schema = load_schema(paths.schema)
    except SchemaError as exc:
        if not args.json:
            raise
        print_json({"ok": False, "file": str(paths.schema), "problems": exc.problem_dicts()})
        return 2
    notes = trust_notes(schema.trust)
    if args.json:
        print_json(
            {"ok": True, "file": str(paths.schema), "schema": schema.to_dict(), "notes": notes}
        )
    else:
        names = ", ".join(schema.folder_names)
        print(
            f"{paths.schema}: OK, {len(schema.folders)} folders ({names}), timezone {schema.timezone}"
        )
        for note in notes:
            print(f"note: {note}")
    return 0


def trust_notes(trust: TrustRules) -> list[str]:
    """What the schema's ``trust:`` rules mean for writes a user may not expect: with no
    trusted source at all, every change a note makes to what a page holds waits for a
    person (``memserver.kb.trust_gate``)."""
    if trust.default >= Level.TRUSTED or any(v >= Level.TRUSTED for v in trust.sources.values()):
        return []
    return [
        "no source is trusted (schema.yaml has no trust: rule that says trusted), so every "
        "change a note makes to what a page already holds (a value replaced, a decision "
        "superseded) waits for a person in `memserver review`; to let a folder's notes "
        "apply such changes at once, add for example: trust: {sources: {decisions: trusted}}"
    ]


def _folder_of(file: Path, given: str | None) -> str:
    if given:
        return given
    parent = file.absolute().parent
    if parent.parent.name == "knowledge":
        return parent.name
    raise UserError(
        f"cannot tell the folder of {file}: it is not under knowledge/<folder>/",
        "pass --folder <name>",
    )


def run_page_check(args: argparse.Namespace) -> int:
    from memserver.kb.page import effective_date, page_slug, parse_page, render_page, validate_page
    from memserver.kb.schema import load_schema

    file = Path(args.file)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{file} does not exist", "give the path of a markdown page") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {file}: {exc}", "pages are UTF-8 markdown files") from None
    folder = load_schema(KBPaths.of(args.kb).schema).folder(_folder_of(file, args.folder))
    try:
        page = parse_page(text, source=str(file))
    except PageValidationError as exc:
        problems = list(exc.problems)
    else:
        problems = validate_page(page, folder)
        if not problems and file.suffix == ".md" and page_slug(page, folder) != file.stem:
            slug = page_slug(page, folder)
            problems.append(
                Problem(
                    "file",
                    f"the file name does not match the page's slug {slug!r}",
                    f"rename it to {slug}.md",
                )
            )
    if problems:
        if args.json:
            print_json(
                {"ok": False, "file": str(file), "problems": [p.as_dict() for p in problems]}
            )
            return 2
        raise PageValidationError(problems, str(file))
    day = effective_date(page, folder, file.stem)
    canonical = render_page(page, folder) == text.replace("\r\n", "\n")
    if args.json:
        print_json(
            {
                "ok": True,
                "file": str(file),
                "folder": folder.name,
                "slug": file.stem,
                "effective_date": day.isoformat() if day else None,
                "canonical": canonical,
            }
        )
    else:
        note = "" if canonical else " (not in canonical form: the server would re-render it)"
        print(f"{file}: OK, folder {folder.name}, effective date {day or 'none'}{note}")
    return 0
