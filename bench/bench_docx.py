"""Which way to read a Word document: measured on files from more than one writer.

Three candidates, each run in this process on the same files:

- ``markitdown``: markitdown's own ``DocxConverter`` (it first rewrites
  ``word/document.xml`` through BeautifulSoup's XML parser, then runs mammoth);
- ``mammoth+html``: mammoth reads the DOCX into HTML, markitdown's HTML converter writes
  the markdown (what ``memserver.convert.document`` does);
- ``python-docx``: the paragraphs' text alone (a floor: no headings, lists or tables).

The files: one written by python-docx (headings, a list, a table), the LibreOffice-written
sample of the tests (``tests/memserver/convert/samples/falcon-roster.docx``) and the
converter tests' handbook. For each file and candidate: whether it converted, how many
of the file's known sentences, headings, list items and table rows the markdown holds,
and the median milliseconds of ``--rounds`` conversions. The versions of lxml,
beautifulsoup4, mammoth and markitdown are printed with it: the first candidate's result
depends on them.

    .venv/bin/python -m bench.bench_docx --rounds 20
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memserver.convert.errors import version_of
from tests.memserver.convert.originals import write_docx
from tests.memserver.convert.test_word import SAMPLES, python_docx_file


@dataclass(frozen=True)
class Sample:
    name: str
    writer: str
    data: bytes
    sentences: tuple[str, ...]
    headings: int
    items: int
    rows: int


def samples() -> list[Sample]:
    with tempfile.TemporaryDirectory() as tmp:
        handbook = write_docx(Path(tmp) / "handbook.docx").read_bytes()
    return [
        Sample(
            "osprey-plan.docx",
            "python-docx 1.x",
            python_docx_file(),
            ("Osprey goes live in the Denver depot on 2026-11-02.", "Sofia Rossi"),
            1,
            2,
            2,
        ),
        Sample(
            "falcon-roster.docx",
            "LibreOffice 7.4",
            (SAMPLES / "falcon-roster.docx").read_bytes(),
            ("Tom Becker leads the night shift at the Falcon warehouse from 2026-10-01.",),
            2,
            2,
            3,
        ),
        Sample(
            "handbook.docx",
            "python-docx 1.x",
            handbook,
            ("Forklift drivers renew their Falcon safety badge each March.",),
            2,
            0,
            0,
        ),
    ]


def markitdown_docx(data: bytes) -> str:
    from markitdown import StreamInfo
    from markitdown.converters import DocxConverter

    info = StreamInfo(extension=".docx", filename="x.docx")
    return str(DocxConverter().convert(io.BytesIO(data), info).markdown or "")


def mammoth_html(data: bytes) -> str:
    from memserver.convert.document import _docx_markdown

    return _docx_markdown(data, "x.docx")


def python_docx_text(data: bytes) -> str:
    import docx

    return "\n\n".join(p.text for p in docx.Document(io.BytesIO(data)).paragraphs)


CANDIDATES: dict[str, Callable[[bytes], str]] = {
    "markitdown": markitdown_docx,
    "mammoth+html": mammoth_html,
    "python-docx": python_docx_text,
}


def measure(sample: Sample, convert: Callable[[bytes], str], rounds: int) -> str:
    try:
        text = convert(sample.data)
    except Exception as exc:
        return f"FAILED ({type(exc).__name__}: {str(exc)[:60]})"
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        convert(sample.data)
        times.append((time.perf_counter() - started) * 1000)
    lines = text.splitlines()
    found = sum(s in " ".join(text.split()) for s in sample.sentences)
    headings = sum(line.startswith("#") for line in lines)
    items = sum(line.startswith(("* ", "- ")) for line in lines)
    rows = sum(
        bool(line.startswith("|") and "---" not in line and line.strip("| ")) for line in lines
    )
    return (
        f"sentences {found}/{len(sample.sentences)}, headings {headings}/{sample.headings}, "
        f"list items {items}/{sample.items}, table rows {rows}/{sample.rows}, "
        f"{statistics.median(times):.1f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="conversions timed per file")
    args = parser.parse_args(argv)
    versions = ", ".join(
        f"{p} {version_of(p)}" for p in ("lxml", "beautifulsoup4", "mammoth", "markitdown")
    )
    print(f"versions: {versions}")
    for sample in samples():
        for name, convert in CANDIDATES.items():
            print(
                f"{sample.name} ({sample.writer}) {name:>13}: {measure(sample, convert, args.rounds)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
