"""`memserver` subcommands for the core area (filled in by that area's work)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this area's subcommands to the `memserver` parser."""
