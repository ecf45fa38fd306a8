"""The ingestion ledger: ``manifest.json`` reconciled with the files under ``source/``.

Status of each source file::

    pending   new, never ingested
    updated   ingested before, content changed since (or changed while being ingested)
    ingested  knowledge is current with this file
    failed    the last attempt failed (error kept); retried when the file changes or on reset
    removed   the file is gone (its pages are kept)

Every file under ``source/`` gets an entry: one that is never read (a symlinked folder,
a name with a control character, listed under its escaped name) is ``failed`` with the
reason. A scan converts originals (PDFs, mail, ...) first and writes each one's entry as
it is done. Every change happens under an exclusive ``flock`` on
``.memserver/manifest.lock`` and is written atomically (temp file in the same folder, fsync, rename), so concurrent
writers (the server, a CLI scan, a second agent) never lose or corrupt entries. A
``manifest.json`` that cannot be read raises ManifestError and is never overwritten.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import functools
import hashlib
import json
import os
import stat
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from memserver.convert.formats import kind_of
from memserver.errors import ManifestError, NotFoundError, UserError
from memserver.kb.converted import (
    MAX_ORIGINAL_BYTES,
    note_text,
    slack_export_error,
    slack_export_part,
)
from memserver.kb.frontmatter import as_date, date_in_name, read_frontmatter
from memserver.kb.layout import KBPaths, resolved_path, write_atomic
from memserver.kb.source_file import (
    TooLarge,
    UnsafeSource,
    open_source_file,
    read_source_file,
)
from memserver.kb.source_names import LINKED_FOLDER, name_problem, safe_name

MANIFEST_VERSION = 1
DEFAULT_MAX_SOURCE_BYTES = 2 * 1024 * 1024
LOCK_TIMEOUT_SECONDS = 30.0
MAX_ERROR_CHARS = 2000
MAX_DROPPED = 20  # dropped items listed per source (all are counted)
CONVERT_WORKERS = 2  # originals converted at once by a scan (each in its own process)
MAX_DROPPED_CHARS = 200
# Frontmatter keys that give a raw document's date, in order of preference.
DOC_DATE_KEYS = ("date", "event_date", "published")


class Status(StrEnum):
    PENDING = "pending"
    UPDATED = "updated"
    INGESTED = "ingested"
    FAILED = "failed"
    REMOVED = "removed"


@dataclass(frozen=True)
class SourceEntry:
    """One source file's line in the ledger; ``path`` is relative to ``source/``."""

    path: str
    hash: str
    status: Status
    doc_date: datetime.date
    size: int
    error: str | None = None
    pages: tuple[str, ...] = ()
    ingested_hash: str | None = None
    extractor: str | None = None
    updated_at: str = ""
    # What the last ingestion left out because the schema has no place for it
    # ("pages[2]: no folder 'invoices' ..."), at most MAX_DROPPED lines.
    dropped: tuple[str, ...] = ()
    dropped_count: int = 0
    # Why the configured model's work was replaced ("llm_unusable": the rules read it).
    degraded: tuple[str, ...] = ()
    # Why the note became the pages it did: its folder (or none) and the evidence for it
    # ("no page of its own: an email ...", "meetings: a transcript ...").
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "hash": self.hash,
            "status": self.status.value,
            "doc_date": self.doc_date.isoformat(),
            "size": self.size,
            "error": self.error,
            "pages": list(self.pages),
            "ingested_hash": self.ingested_hash,
            "extractor": self.extractor,
            "updated_at": self.updated_at,
            "dropped_count": self.dropped_count,
            "dropped": list(self.dropped),
            "degraded": list(self.degraded),
            "reasons": list(self.reasons),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SourceEntry:
        return cls(
            path=str(data["path"]),
            hash=str(data["hash"]),
            status=Status(data["status"]),
            doc_date=datetime.date.fromisoformat(data["doc_date"]),
            size=int(data["size"]),
            error=data.get("error"),
            pages=tuple(str(p) for p in data.get("pages") or ()),
            ingested_hash=data.get("ingested_hash"),
            extractor=data.get("extractor"),
            updated_at=str(data.get("updated_at") or ""),
            dropped=tuple(str(d) for d in data.get("dropped") or ()),
            dropped_count=int(data.get("dropped_count") or 0),
            degraded=tuple(str(d) for d in data.get("degraded") or ()),
            reasons=tuple(str(r) for r in data.get("reasons") or ()),
        )


@dataclass(frozen=True)
class ScanResult:
    entries: tuple[SourceEntry, ...]
    counts: Mapping[str, int]


@dataclass(frozen=True)
class _Observed:
    """What a file holds right now (its date is only worked out when it is needed)."""

    rel: str
    hash: str
    size: int
    mtime: float
    text: str | None
    error: str | None
    known_date: datetime.date | None = None  # a converted original's own, even if it failed

    @functools.cached_property
    def doc_date(self) -> datetime.date:
        if self.text is None and self.known_date is not None:
            return self.known_date
        return _doc_date(self.rel, self.text, self.mtime)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _doc_date(rel: str, text: str | None, mtime: float) -> datetime.date:
    """Frontmatter date, else a date in the file name, else the file's mtime (UTC)."""
    if text is not None:
        front = read_frontmatter(text)
        for key in DOC_DATE_KEYS:
            found = as_date(front.get(key))
            if found is not None:
                return found
    found = date_in_name(rel.rsplit("/", 1)[-1])
    if found is not None:
        return found
    return datetime.datetime.fromtimestamp(mtime, datetime.UTC).date()


def _observe(
    rel: str, full: Path, root: Path, max_bytes: int, state: Path | None, fresh: bool = False
) -> _Observed:
    """Hash and decode one file; anything unreadable becomes an error, never an exception.

    The file is opened once and checked through the open descriptor (see
    ``memserver.kb.source_file``), so a symlink swapped in meanwhile cannot be read. A
    file in a known format (a transcript, an email, a PDF ...) is hashed as it is and its
    text is the note it converts to (``memserver.kb.converted``, cached under ``state``;
    ``fresh``: converted again, whatever the cache holds).
    """
    now = time.time()
    kind = kind_of(rel) if state is not None else None
    limit = max(max_bytes, MAX_ORIGINAL_BYTES) if kind else max_bytes
    try:
        if kind is not None and state is not None:
            return _observe_original(rel, full, root, limit, kind, state, max_bytes, fresh)
        read = read_source_file(root, full, limit)
    except UnsafeSource as exc:
        return _Observed(rel, "", 0, now, None, str(exc))
    except TooLarge as big:
        # Not read, so not hashed: size and mtime stand for its content (a change shows).
        digest = _sha256(f"too-large:{big.size}:{big.mtime_ns}".encode())
        error = (
            f"the file is {big.size:,} bytes, larger than the limit of {big.limit:,} bytes "
            "(sources.max_bytes); split it into smaller notes or raise the limit"
        )
        return _Observed(rel, digest, big.size, big.mtime_ns / 1e9, None, error)
    data, mtime = read.data, read.mtime
    digest, size = _sha256(data), len(data)
    if state is not None and (export := slack_export_part(root, rel)) is not None:
        return _Observed(rel, digest, size, mtime, None, slack_export_error(export))
    if b"\x00" in data:
        error = "binary file (contains NUL bytes); only UTF-8 text can be ingested"
        return _Observed(rel, digest, size, mtime, None, error)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        error = (
            f"not UTF-8 text (invalid byte at offset {exc.start}); "
            "convert it, e.g. iconv -f CP1251 -t UTF-8"
        )
        return _Observed(rel, digest, size, mtime, None, error)
    return _Observed(rel, digest, size, mtime, text, None)


def _refused(rel: str, full: Path, problem: str) -> _Observed:
    """A file (or folder) that is never read: its size, time and link target stand for
    its content (a change shows), the problem is its error."""
    try:
        info = full.lstat()
        target = os.readlink(full) if full.is_symlink() else ""
    except OSError:
        return _Observed(rel, "", 0, time.time(), None, problem)
    marker = f"refused:{info.st_size}:{info.st_mtime_ns}:{target}"
    return _Observed(
        rel, _sha256(marker.encode("utf-8", "surrogateescape")), 0, info.st_mtime, None, problem
    )


def _observe_original(
    rel: str,
    full: Path,
    root: Path,
    limit: int,
    kind: str,
    state: Path,
    max_bytes: int,
    fresh: bool,
) -> _Observed:
    """An original in a known format, streamed: hashed a MiB at a time and handed to its
    converter as it is on disk (this process never holds a whole original: a 30 MB PDF
    read whole stayed in the server's memory after it was refused)."""
    with open_source_file(root, full, limit) as (handle, info):
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
        handle.seek(0)
        note = note_text(state, rel, kind, handle, digest, max_bytes, fresh)
    return _Observed(rel, digest, info.st_size, info.st_mtime, note.text, note.error, note.date)


def _requeued(entry: SourceEntry) -> Status:
    return Status.UPDATED if entry.ingested_hash else Status.PENDING


def _reconcile(old: SourceEntry | None, rel: str, seen: _Observed) -> SourceEntry:
    """The entry after looking at the file again (unchanged entries are returned as is)."""
    if old is not None and old.hash == seen.hash and old.status is not Status.REMOVED:
        return old  # includes failed-and-unchanged: it waits for a change or a reset
    base = old or SourceEntry(rel, seen.hash, Status.PENDING, seen.doc_date, seen.size)
    changed = replace(
        base,
        hash=seen.hash,
        size=seen.size,
        doc_date=seen.doc_date if old is None or old.hash != seen.hash else old.doc_date,
        error=seen.error,
        updated_at=_now(),
    )
    if seen.error is not None:
        return replace(changed, status=Status.FAILED)
    if seen.hash == base.ingested_hash:
        return replace(changed, status=Status.INGESTED)
    return replace(changed, status=_requeued(base))


class Manifest:
    """The ledger of one knowledge base (``kb.manifest``).

    A source larger than ``max_bytes`` is never read: it is marked failed with the
    reason (``sources.max_bytes`` in config.yaml).
    """

    def __init__(self, kb: KBPaths, max_bytes: int = DEFAULT_MAX_SOURCE_BYTES) -> None:
        self.kb = kb
        self.max_bytes = max_bytes

    # --- reading ---------------------------------------------------------------------

    def entries(self) -> list[SourceEntry]:
        """Every entry, by path, as last recorded (no scan)."""
        entries = self._load()
        return [entries[key] for key in sorted(entries)]

    def get(self, path: str) -> SourceEntry:
        rel = self.kb.source_rel(path)
        entry = self._load().get(rel)
        if entry is None:
            raise NotFoundError(
                f"no source {rel!r} in the manifest",
                "check the path (relative to source/) or run `memserver scan`",
            )
        return entry

    def pending(self) -> list[SourceEntry]:
        """Pending and updated sources, oldest document first (scans first)."""
        return self.waiting(self.scan().entries)

    @staticmethod
    def waiting(entries: Iterable[SourceEntry]) -> list[SourceEntry]:
        """The pending and updated ones of ``entries``, oldest document first."""
        todo = [e for e in entries if e.status in (Status.PENDING, Status.UPDATED)]
        return sorted(todo, key=lambda e: (e.doc_date, e.path))

    # --- reconciling -------------------------------------------------------------------

    def scan(self) -> ScanResult:
        """Hash every file under source/ and reconcile the ledger with what is there."""
        if not self.kb.source.is_dir():
            raise UserError(
                f"{self.kb.source} does not exist",
                "create it and put markdown notes in it, or point --kb at a knowledge base",
            )
        walked = list(self._walk())
        observed = self._convert_each(
            [(rel, full) for rel, full, problem in walked if problem is None and kind_of(rel)]
        )
        with self._locked():
            before = self._load()
            after: dict[str, SourceEntry] = {}
            for rel, full, problem in walked:
                seen = observed.get(rel) or self._observe(rel, full, problem=problem)
                after[rel] = _reconcile(before.get(rel), rel, seen)
            for rel, entry in before.items():
                if rel not in after:
                    gone = entry.status is Status.REMOVED
                    after[rel] = (
                        entry if gone else replace(entry, status=Status.REMOVED, updated_at=_now())
                    )
            if after != before:
                self._save(after)
        entries = tuple(after[key] for key in sorted(after))
        counts = {status.value: 0 for status in Status}
        for entry in entries:
            counts[entry.status.value] += 1
        return ScanResult(entries, counts)

    def read_source(self, path: str) -> tuple[str, str, SourceEntry]:
        """``(text, sha256, entry)`` of a source as it is now; the ledger is brought up to date.

        Pass the hash to :meth:`mark_ingested` so a file edited meanwhile stays queued.
        The text is raw: redact ``<private>`` spans (memserver.kb.redact) before sending it on.
        """
        rel, full = self._existing(path)
        with self._locked():
            entries = self._load()
            seen = self._observe(rel, full)
            entry = _reconcile(entries.get(rel), rel, seen)
            self._put(entries, entry)
        if seen.text is None:
            raise UserError(
                f"source {rel!r} cannot be ingested: {seen.error}", "fix or remove the file"
            )
        return seen.text, seen.hash, entry

    def mark_ingested(
        self,
        path: str,
        hash_read: str,
        pages: Sequence[str],
        extractor: str = "llm",
        dropped: Sequence[str] = (),
        degraded: Sequence[str] = (),
        reasons: Sequence[str] = (),
    ) -> SourceEntry:
        """Record a finished ingestion of the version with ``hash_read``.

        If the file changed since it was read, the entry stays (or becomes) ``updated``
        so the newer content is ingested next time. ``dropped`` lists what the
        extraction left out because the schema has no place for it: all are counted,
        the first ``MAX_DROPPED`` kept. ``degraded`` says why a configured model's work
        was replaced (``llm_unusable``: the rules extractor read the note). ``reasons``
        say why the note became the pages it did (the first ``MAX_DROPPED`` kept).
        """
        hash_read = hash_read.strip().lower()
        if len(hash_read) != 64 or any(ch not in "0123456789abcdef" for ch in hash_read):
            raise UserError(
                f"hash_read {hash_read!r} is not a SHA-256 hex digest",
                "pass the sha256 that source_read returned with the text",
            )
        rel, full = self.kb.source_file(path)
        with self._locked():
            entries = self._load()
            current, seen = self._current(entries, rel, full)
            if seen is None:
                status = Status.REMOVED
            elif seen.error is not None:
                status = Status.FAILED  # it changed into something unreadable meanwhile
            elif seen.hash == hash_read:
                status = Status.INGESTED
            else:
                status = Status.UPDATED
            entry = replace(
                current,
                status=status,
                error=seen.error if seen is not None else None,
                pages=tuple(dict.fromkeys(str(p) for p in pages)),
                ingested_hash=hash_read,
                extractor=extractor,
                updated_at=_now(),
                dropped=tuple(str(d)[:MAX_DROPPED_CHARS] for d in dropped[:MAX_DROPPED]),
                dropped_count=len(dropped),
                degraded=tuple(degraded),
                reasons=tuple(str(r)[:MAX_DROPPED_CHARS] for r in reasons[:MAX_DROPPED]),
            )
            self._put(entries, entry)
        return entry

    def mark_failed(self, path: str, error: str) -> SourceEntry:
        """Record a failed attempt; it is retried when the file changes or on reset."""
        rel, full = self.kb.source_file(path)
        with self._locked():
            entries = self._load()
            # Keep the hash the attempt was made on: a later edit must still look like a change.
            current = entries.get(rel) or self._current(entries, rel, full)[0]
            message = (error.strip() or "failed without a message")[:MAX_ERROR_CHARS]
            entry = replace(current, status=Status.FAILED, error=message, updated_at=_now())
            self._put(entries, entry)
        return entry

    def reset(self, path: str) -> SourceEntry:
        """Queue a source again (failed or ingested); a file that is gone cannot be reset.

        A file that still cannot be read as text stays failed, with the reason; a file in
        a known format is converted again first.
        """
        rel, full = self._existing(path)
        if kind_of(rel) is not None:  # convert again (a timeout may have been the load's)
            self._observe(rel, full, fresh=True)
        with self._locked():
            entries = self._load()
            seen = self._observe(rel, full)
            entry = _reconcile(entries.get(rel), rel, seen)
            if seen.error is None:
                entry = replace(entry, status=_requeued(entry), error=None, updated_at=_now())
            self._put(entries, entry)
        return entry

    # --- internals ------------------------------------------------------------------------

    def _convert_each(self, originals: Sequence[tuple[str, Path]]) -> dict[str, _Observed]:
        """Convert (or read from the cache) the originals, ``CONVERT_WORKERS`` at once,
        outside the lock; each one's entry is written as soon as it is done, so a scan
        of many slow files shows them one by one. Returns what was seen of each."""
        observed: dict[str, _Observed] = {}
        if not originals:
            return observed
        with ThreadPoolExecutor(CONVERT_WORKERS, thread_name_prefix="convert") as pool:
            futures = {pool.submit(self._observe, rel, full): rel for rel, full in originals}
            for future in as_completed(futures):
                rel = futures[future]
                seen = observed[rel] = future.result()
                with self._locked():
                    entries = self._load()
                    self._put(entries, _reconcile(entries.get(rel), rel, seen))
        return observed

    def _root(self) -> Path:
        return resolved_path(self.kb.source, "source/")

    def _observe(
        self, rel: str, full: Path, fresh: bool = False, problem: str | None = None
    ) -> _Observed:
        if problem is not None:  # a name or a kind of file that is never read
            return _refused(rel, full, problem)
        return _observe(rel, full, self._root(), self.max_bytes, self.kb.state, fresh)

    def read_text(self, path: str) -> tuple[str, str]:
        """``(text, sha256)`` of a source as it is now, without touching the ledger;
        UserError saying why it cannot be read (too large, binary, a link out, ...)."""
        rel, full = self.kb.source_file(path)
        seen = self._observe(rel, full)
        if seen.text is None:
            raise UserError(f"source {rel} cannot be read: {seen.error}")
        return seen.text, seen.hash

    def _existing(self, path: str) -> tuple[str, Path]:
        rel, full = self.kb.source_file(path)
        if not full.is_file():
            raise NotFoundError(
                f"no source file {rel!r} under {self.kb.source}",
                "check the path (relative to source/); `memserver scan --json` lists them",
            )
        return rel, full

    def _current(
        self, entries: Mapping[str, SourceEntry], rel: str, full: Path
    ) -> tuple[SourceEntry, _Observed | None]:
        """The entry reconciled with the file as it is now, and what was seen (None: gone)."""
        old = entries.get(rel)
        if full.is_file():
            seen = self._observe(rel, full)
            return _reconcile(old, rel, seen), seen
        if old is None:
            raise NotFoundError(f"no source {rel!r}", "check the path (relative to source/)")
        return (old if old.status is Status.REMOVED else replace(old, status=Status.REMOVED)), None

    def _walk(self) -> Iterator[tuple[str, Path, str | None]]:
        """Regular files (and symlinks) under source/, skipping hidden files and folders,
        each with why it is never read (None: it is read). A symlinked folder is listed
        (not followed), and a name with a control character is listed under its safe
        rendering (``\\x1b``), so each gets a failed entry instead of none."""
        for dirpath, dirnames, filenames in os.walk(self.kb.source, followlinks=False):
            base = Path(dirpath)
            kept = []
            for name in sorted(d for d in dirnames if not d.startswith(".")):
                if (base / name).is_symlink():
                    rel = (base / name).relative_to(self.kb.source).as_posix()
                    yield safe_name(rel), base / name, name_problem(rel) or LINKED_FOLDER
                else:
                    kept.append(name)
            dirnames[:] = kept
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                full = base / name
                with contextlib.suppress(OSError):
                    mode = full.lstat().st_mode
                    if not stat.S_ISREG(mode) and not stat.S_ISLNK(mode):
                        continue  # fifos and sockets would block or fail a read
                    rel = full.relative_to(self.kb.source).as_posix()
                    yield safe_name(rel), full, name_problem(rel)

    def _put(self, entries: dict[str, SourceEntry], entry: SourceEntry) -> None:
        if entries.get(entry.path) != entry:
            entries[entry.path] = entry
            self._save(entries)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.kb.state.mkdir(parents=True, exist_ok=True)
        with open(self.kb.manifest_lock, "a+b") as handle:
            deadline = time.monotonic() + LOCK_TIMEOUT_SECONDS
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise ManifestError(
                            f"{self.kb.manifest} is locked by another process",
                            f"wait for it to finish (lock file {self.kb.manifest_lock})",
                        ) from None
                    time.sleep(0.02)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _load(self) -> dict[str, SourceEntry]:
        path = self.kb.manifest
        fix = (
            f"restore it from version control, or move it aside (mv {path.name} {path.name}.bad) "
            "and run `memserver scan` to rebuild it (every source is then pending again)"
        )
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise ManifestError(f"cannot read {path}: {exc}", fix) from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ManifestError(
                f"{path} is corrupt: {exc.msg} at line {exc.lineno} column {exc.colno}", fix
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("sources"), dict):
            raise ManifestError(f"{path} is corrupt: no 'sources' mapping", fix)
        if not isinstance(data.get("version"), int) or data["version"] > MANIFEST_VERSION:
            raise ManifestError(
                f"{path} has version {data.get('version')!r}; this memserver reads {MANIFEST_VERSION}",
                "upgrade memserver, or rebuild the manifest as described",
            )
        out: dict[str, SourceEntry] = {}
        for key, raw in data["sources"].items():
            try:
                out[key] = SourceEntry.from_dict({**raw, "path": key})
            except (KeyError, TypeError, ValueError) as exc:
                raise ManifestError(
                    f"{path} is corrupt: entry {key!r} is invalid ({exc})", fix
                ) from None
        return out

    def _save(self, entries: Mapping[str, SourceEntry]) -> None:
        path = self.kb.manifest
        body = {
            "version": MANIFEST_VERSION,
            "sources": {key: entries[key].to_dict() for key in sorted(entries)},
        }
        text = json.dumps(body, ensure_ascii=False, indent=2) + "\n"
        write_atomic(path, text.encode("utf-8"))
