"""A page writer that is killed (the crash tests' subprocess; not a test module).

python -m tests.memserver.store.crash_writer KB DATABASE_URL step STEP
    one write of ``people/alice-chen`` that SIGKILLs itself at STEP of the write
    ("staged", "committed", "in_place": ``PageWrites.write_step``)
python -m tests.memserver.store.crash_writer KB DATABASE_URL loop LOG
    four threads writing four pages, version after version, until killed; each
    write is logged ``try <page> <n>`` before and ``ack <page> <n>`` after it returns
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

from memserver.clients.embed import HashEmbedder
from memserver.errors import NotFoundError
from memserver.kb.page import Page
from memserver.store.knowledge_base import KnowledgeBase

PAGES = 4


def person(n: int, mark: str) -> Page:
    return Page(
        title=f"Crash Writer {n}",
        type="person",
        fields={"role": f"Role {mark}"},
        sections={"Summary": f"Written as {mark}."},
    )


def _step(kb: KnowledgeBase, step: str) -> None:
    def kill(at: str, page_id: str) -> None:
        if at == step:
            os.kill(os.getpid(), signal.SIGKILL)

    kb.write_step = kill
    current = kb.get_page("people/crash-writer-0").version
    kb.put_page("people", person(0, "killed"), current)


def _loop(kb: KnowledgeBase, log_path: Path) -> None:
    log = log_path.open("a", encoding="utf-8", buffering=1)
    guard = threading.Lock()

    def say(line: str) -> None:
        with guard:
            log.write(line + "\n")

    def writer(n: int) -> None:
        page_id = f"people/crash-writer-{n}"
        try:
            stored = kb.get_page(page_id)
            version, mark = stored.version, int(stored.page.fields["role"].split("-")[-1])
        except NotFoundError:
            version, mark = None, 0
        while True:
            mark += 1
            say(f"try {page_id} {mark}")
            version = kb.put_page("people", person(n, f"mark-{mark}"), version).version
            say(f"ack {page_id} {mark}")

    threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(PAGES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def main() -> None:
    kb_root, url, mode, arg = sys.argv[1:5]
    kb = KnowledgeBase.open(kb_root, embedder=HashEmbedder(), database_url=url)
    if mode == "step":
        _step(kb, arg)
    else:
        _loop(kb, Path(arg))


if __name__ == "__main__":
    main()
