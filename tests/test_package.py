"""The package installs and its console scripts start."""

import subprocess
import sys

from memserver.cli import build_parser


def test_memserver_help_lists_every_area() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "memserver.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0
    assert "memserver" in out.stdout


def test_parser_requires_a_command() -> None:
    parser = build_parser()
    assert parser.prog == "memserver"
