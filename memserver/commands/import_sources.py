"""`memserver import slack|email|folder PATH`: exports that are not dropped in by hand,
written into ``source/`` as notes named after their originals (see
``memserver.convert.imports``). Re-running it writes nothing that is already there."""

from __future__ import annotations

import argparse
from pathlib import Path

from memserver.errors import UserError
from memserver.kb.layout import KBPaths
from memserver.terminal.output import print_json

DEFAULT_INTO = {"slack": "slack", "email": "email", "folder": ""}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``memserver import`` to the `memserver` parser."""
    parser = sub.add_parser(
        "import",
        help="convert a Slack export, a mailbox or a folder of documents into notes in source/",
        description="Convert an export into markdown notes under source/: `slack` (a Slack "
        "export folder or .zip: a note per channel and day), `email` (.mbox/.eml/.msg or a folder "
        "of them: a note per thread), `folder` (every file at any depth: Word, PDF, slides, "
        "spreadsheets, books, web pages, transcripts, email; long documents split to fit). "
        "Idempotent.",
    )
    parser.add_argument("what", choices=sorted(DEFAULT_INTO), help="the kind of export")
    parser.add_argument("path", help="the export: a file or a folder")
    parser.add_argument(
        "--into",
        help="folder under source/ to write into (default: slack/ or email/, or the "
        "folder's own name for `folder`)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:
    from memserver.clients.config import load_settings
    from memserver.convert.errors import ConversionError
    from memserver.convert.imports import plan_import
    from memserver.kb.layout import write_atomic

    paths = KBPaths.of(args.kb)
    if not paths.source.is_dir():
        raise UserError(f"{paths.source} does not exist", "point --kb at a knowledge base")
    source = Path(args.path)
    into = args.into if args.into is not None else DEFAULT_INTO[args.what] or source.stem
    target = _inside(paths, into)
    limit = load_settings(args.config).source_max_bytes
    try:
        plan = plan_import(args.what, source, limit)
    except ConversionError as exc:
        raise UserError(f"cannot import {source}: {exc.message}", exc.fix) from None
    written: dict[str, list[str]] = {"created": [], "updated": [], "unchanged": []}
    for note in plan.notes:
        file = _inside(paths, f"{into}/{note.rel}" if into else note.rel)
        data = note.text.encode("utf-8")
        old = file.read_bytes() if file.is_file() else None
        state = "unchanged" if old == data else "updated" if old is not None else "created"
        if old != data:
            write_atomic(file, data)
        written[state].append(file.relative_to(paths.source.resolve()).as_posix())
    refused = [{"path": r.path, "why": r.why} for r in plan.refused]
    if args.json:
        print_json({**written, "refused": refused, "into": str(target)})
    else:
        counts = ", ".join(f"{len(v)} {k}" for k, v in written.items())
        print(f"{args.what} {source} -> {target}: {counts}, {len(refused)} refused")
        for item in refused:
            print(f"refused: {item['path']}: {item['why']}")
    return 1 if refused else 0


def _inside(paths: KBPaths, rel: str) -> Path:
    """``source/<rel>``, refused when it would leave source/."""
    root = paths.source.resolve()
    full = (root / rel).resolve()
    if full != root and root not in full.parents:
        raise UserError(f"{rel!r} is outside source/", "give a folder under source/ with --into")
    return full
