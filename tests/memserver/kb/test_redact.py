"""Private spans never leave a source: redaction before LLMs and the index."""

from __future__ import annotations

from memserver.kb.layout import KBPaths
from memserver.kb.redact import REDACTED, has_private, redact_private


def test_private_spans_are_replaced_across_lines_and_case() -> None:
    text = "Salary talk.\n<private>Base goes to\n$142,000</private> Then <PRIVATE note='x'>y</Private>."
    out = redact_private(text)
    assert out == f"Salary talk.\n{REDACTED} Then {REDACTED}."
    assert "142,000" not in out and has_private(text) and not has_private(out)


def test_unclosed_private_hides_the_rest_and_stray_closers_vanish() -> None:
    assert redact_private("ok <private>secret forever") == f"ok {REDACTED}"
    assert redact_private("a </private> b") == "a  b"
    assert redact_private("no secrets") == "no secrets"


def test_the_example_one_on_one_is_redacted(example_kb: KBPaths) -> None:
    text = (example_kb.source / "one-on-ones" / "2026-09-29-maria-alex-1on1.md").read_text()
    assert "142,000" in text
    assert "142,000" not in redact_private(text)
