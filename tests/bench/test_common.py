"""The bench's programs run this checkout's code, whichever tree the venv installed."""

from __future__ import annotations

import os

from bench.common import CHECKOUT, this_checkout


def test_this_checkout_comes_first_on_the_programs_path_and_keeps_the_rest() -> None:
    env = this_checkout({"PYTHONPATH": os.pathsep.join(["/elsewhere", str(CHECKOUT)]), "X": "1"})
    assert env["PYTHONPATH"].split(os.pathsep) == [str(CHECKOUT), "/elsewhere"]
    assert env["X"] == "1"
    assert this_checkout({})["PYTHONPATH"] == str(CHECKOUT)
    assert (CHECKOUT / "bench" / "common.py").is_file()
