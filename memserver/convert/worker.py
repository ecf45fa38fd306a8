"""The converter process: ``python -m memserver.convert.worker KIND NAME`` reads the
original's bytes on stdin and prints ``{"notes": [...]}`` or ``{"error", "fix"}`` as JSON.

It limits itself before reading anything (``memserver.convert.isolated`` starts it and
kills it at its time limit): address space ``MEMSERVER_CONVERT_MEMORY`` bytes, CPU
seconds ``MEMSERVER_CONVERT_CPU``, and no file may be written (``RLIMIT_FSIZE`` 0). The
text and notes it may write are its budget (``memserver.convert.budget``).
"""

from __future__ import annotations

import json
import os
import resource
import sys

from memserver.convert.errors import ConversionError


def _limit() -> None:
    memory = int(os.environ.get("MEMSERVER_CONVERT_MEMORY", str(1536 * 1024 * 1024)))
    cpu = int(os.environ.get("MEMSERVER_CONVERT_CPU", "60"))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main(argv: list[str]) -> int:
    _limit()
    kind, name = argv
    data = sys.stdin.buffer.read()
    from memserver.convert.budget import from_environment
    from memserver.convert.formats import convert

    try:
        budget = from_environment(name)
        notes = convert(kind, name, data)
        # What the converters did not count as they went, counted now.
        budget.text = budget.notes = 0
        for note in notes:
            budget.note(note.body)
        out: dict[str, object] = {"notes": [n.to_dict() for n in notes]}
    except ConversionError as exc:
        out = {"error": exc.message, "fix": exc.fix, "date": exc.date and exc.date.isoformat()}
    except MemoryError:
        out = {
            "error": f"{name} needs more memory to convert than the limit allows (a bomb?)",
            "fix": "split the document, or export it again without embedded objects",
        }
    except RecursionError:
        out = {"error": f"{name} is nested too deeply to convert", "fix": "export it again"}
    except Exception as exc:  # a library's error that no converter step named
        out = {
            "error": f"{name}: the {kind} converter failed ({type(exc).__name__}: {exc})"[:500],
            "fix": "if the file opens in its own program, the converter is at fault, not the "
            "file: save it again in another format (.pdf, .md) and drop that in, and report "
            "the message above",
        }
    sys.stdout.write(json.dumps(out, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
