"""Reading a source: the file checked is the file read, whatever is swapped in meanwhile."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from memserver.errors import UserError
from memserver.kb.manifest import Manifest
from memserver.kb.source_file import TooLarge, UnsafeSource, read_source_file
from tests.fixtures.kb import MakeKB

SECRET = "root:x:0:0:the-secret-outside-source"


def test_links_are_followed_only_inside_source(make_kb: MakeKB, tmp_path: Path) -> None:
    paths = make_kb(sources={"notes/real.md": "A real note.\n"})
    outside = tmp_path / "passwd"
    outside.write_text(SECRET)
    (paths.source / "inside-link.md").symlink_to(paths.source / "notes" / "real.md")
    (paths.source / "outside-link.md").symlink_to(outside)
    os.mkfifo(paths.source / "pipe.md")
    root = paths.source.resolve()
    assert read_source_file(root, paths.source / "inside-link.md", 1000).data == b"A real note.\n"
    with pytest.raises(UnsafeSource, match="outside source/"):
        read_source_file(root, paths.source / "outside-link.md", 1000)
    with pytest.raises(UnsafeSource, match="not a regular file"):
        read_source_file(root, paths.source / "pipe.md", 1000)  # refused, not waited on
    with pytest.raises(TooLarge):
        read_source_file(root, paths.source / "notes" / "real.md", 5)


def test_a_link_swapped_between_check_and_read_never_leaks_the_outside_file(
    make_kb: MakeKB, tmp_path: Path
) -> None:
    """An attacker flips ``source/swap.md`` between a note and a file outside source/ as fast
    as it can while the server reads it: no read may return the outside file."""
    paths = make_kb(sources={"notes/real.md": "A real note.\n"})
    outside = tmp_path / "passwd"
    outside.write_text(SECRET)
    link, spare = paths.source / "swap.md", paths.source / ".swap.tmp"
    link.symlink_to(paths.source / "notes" / "real.md")
    stop = threading.Event()

    def flip() -> None:
        targets = [outside, paths.source / "notes" / "real.md"]
        n = 0
        while not stop.is_set():
            spare.unlink(missing_ok=True)
            spare.symlink_to(targets[n % 2])
            os.replace(spare, link)  # atomic: the link is always one of the two
            n += 1

    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    manifest = Manifest(paths)
    read = refused = 0
    try:
        for _ in range(3000):
            try:
                text, _, _ = manifest.read_source("swap.md")
            except UserError as exc:
                assert SECRET not in str(exc)
                refused += 1
                continue
            assert SECRET not in text
            read += 1
    finally:
        stop.set()
        flipper.join(timeout=10)
    assert read and refused  # both targets were met: the race was really run
