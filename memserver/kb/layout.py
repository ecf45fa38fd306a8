"""Where a knowledge base keeps its files, and the one place that refuses unsafe names.

A knowledge base on disk::

    <root>/schema.yaml              the shape of knowledge
    <root>/source/**                raw input, any depth, never modified
    <root>/knowledge/<folder>/<slug>.md   pages (the system of record)
    <root>/manifest.json            the ingestion ledger
    <root>/.memserver/              local state (embedded PostgreSQL, tokens, logs, locks)

Every path built from a caller's string (a slug, a folder, a source path) goes through
:func:`check_name` or :meth:`KBPaths.source_file`, so ``..``, absolute paths and symlinks
that leave the knowledge base are refused in one place.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from memserver.errors import UserError

# File systems limit a name to 255 *bytes*: a slug is at most SLUG_MAX_BYTES of UTF-8,
# which leaves room for ".md" and the temporary name of an atomic write.
MAX_NAME_BYTES = 200
SLUG_MAX_BYTES = 200
_CUT_HASH_CHARS = 8


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a single file or folder name, or None when it can."""
    if not name:
        return "it is empty"
    if "/" in name or "\\" in name:
        return "it contains a path separator"
    if ".." in name:
        return "it contains '..'"
    if name.startswith("."):
        return "it starts with a dot"
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") for ch in name):
        return "it contains control or invisible characters"
    if name != name.strip():
        return "it starts or ends with whitespace"
    size = len(name.encode("utf-8", errors="surrogatepass"))
    if size > MAX_NAME_BYTES:
        return f"it is {size} bytes long in UTF-8, more than {MAX_NAME_BYTES}"
    return None


def check_name(name: str, what: str = "slug") -> str:
    """Return ``name`` if it is a safe single path component, else raise UserError."""
    problem = name_problem(name)
    if problem is not None:
        raise UserError(
            f"refused {what} {name!r}: {problem}",
            f"a {what} is one file name: letters, digits and '-', no '/', '..' or leading dot",
        )
    return name


@functools.lru_cache(maxsize=8192)  # pages are slugged several times per write
def slugify(text: str) -> str:
    """A readable file name: lower-case letters and digits of any script, joined by '-'.

    ``"Бат-Эрдэнэ Ганбаатар"`` gives ``"бат-эрдэнэ-ганбаатар"``. Never contains '/',
    '..', control characters or a leading dot; raises UserError when nothing is left.
    """
    norm = unicodedata.normalize("NFKC", str(text)).lower()
    out: list[str] = []
    for ch in norm:
        kind = unicodedata.category(ch)[0]
        # Letters and digits of every script; combining marks stay with their letter.
        if kind in "LN" or (kind == "M" and out and out[-1] != "-"):
            out.append(ch)
        else:
            out.append("-")
    slug = re.sub(r"-{2,}", "-", "".join(out)).strip("-")
    if len(slug.encode("utf-8")) > SLUG_MAX_BYTES:
        slug = cut_slug(slug)
    if not slug:
        raise UserError(
            f"cannot make a file name from {text!r}: it has no letters or digits",
            "give the page a title with letters or digits",
        )
    return check_name(slug, "slug")


def cut_slug(slug: str, max_bytes: int = SLUG_MAX_BYTES) -> str:
    """``slug`` cut to ``max_bytes`` of UTF-8 at a character boundary, plus ``-`` and a short
    hash of the whole slug (so two long titles that share a beginning stay apart).

    The cut never separates a letter from its combining marks.
    """
    digest = hashlib.sha256(slug.encode("utf-8")).hexdigest()[:_CUT_HASH_CHARS]
    room = max_bytes - len(digest) - 1
    end = used = 0
    for index, ch in enumerate(slug):
        used += len(ch.encode("utf-8"))
        if used > room:
            break
        end = index + 1
    while 0 < end < len(slug) and unicodedata.category(slug[end])[0] == "M":
        end -= 1  # the marks after the cut belong to the letter before it
    return f"{slug[:end].rstrip('-')}-{digest}"


@dataclass(frozen=True)
class KBPaths:
    """The paths of one knowledge base, all derived from its root directory."""

    root: Path
    schema: Path
    source: Path
    knowledge: Path
    manifest: Path
    state: Path

    @classmethod
    def of(cls, root: Path | str) -> KBPaths:
        base = Path(root).expanduser().absolute()
        return cls(
            root=base,
            schema=base / "schema.yaml",
            source=base / "source",
            knowledge=base / "knowledge",
            manifest=base / "manifest.json",
            state=base / ".memserver",
        )

    @property
    def manifest_lock(self) -> Path:
        """The lock file that serialises manifest writers (inside the git-ignored state dir)."""
        return self.state / "manifest.lock"

    def folder_dir(self, folder: str) -> Path:
        return self.knowledge / check_name(folder, "folder")

    def page_path(self, folder: str, slug: str) -> Path:
        """``knowledge/<folder>/<slug>.md``; refuses traversal with a UserError."""
        return self.folder_dir(folder) / f"{check_name(slug, 'slug')}.md"

    def source_rel(self, path: str | Path) -> str:
        """Normalise a caller's source path to a relative posix path under ``source/``.

        Accepts ``a/b.md``, ``./a/b.md`` and, tolerantly, ``source/a/b.md``. Refuses
        absolute paths, ``..`` and control characters (UserError).
        """
        text = str(path)
        hint = "give a path relative to source/, such as notes/2026-09-08-kickoff.md"
        if not text.strip():
            raise UserError("refused source path '': it is empty", hint)
        if any(unicodedata.category(ch) == "Cc" for ch in text):
            raise UserError(f"refused source path {text!r}: it contains control characters", hint)
        if "\\" in text:
            raise UserError(f"refused source path {text!r}: use '/' as the separator", hint)
        pure = PurePosixPath(text)
        if pure.is_absolute():
            raise UserError(f"refused source path {text!r}: it is absolute", hint)
        if ".." in pure.parts:
            raise UserError(f"refused source path {text!r}: it contains '..'", hint)
        parts = pure.parts
        # Agents often echo the path with its folder; strip it unless it really exists.
        if len(parts) > 1 and parts[0] == "source" and not (self.source / pure).exists():
            parts = parts[1:]
        if not parts:
            raise UserError(f"refused source path {text!r}: it names no file", hint)
        return PurePosixPath(*parts).as_posix()

    def source_file(self, path: str | Path) -> tuple[str, Path]:
        """``(relative posix path, absolute file)`` for a source; refuses escapes.

        A symlink inside ``source/`` that resolves outside it is refused too.
        """
        rel = self.source_rel(path)
        full = self.source / rel
        root = resolved_path(self.source, "source/")
        resolved = resolved_path(full, f"source path {rel!r}")
        if resolved != root and not resolved.is_relative_to(root):
            raise UserError(
                f"refused source path {rel!r}: it resolves outside source/",
                "sources must live inside the knowledge base's source/ folder",
            )
        return rel, full


def resolved_path(path: Path, what: str) -> Path:
    """``path.resolve()``, or UserError when it cannot be resolved (a symlink loop, a
    link changed or removed while it is followed): never a bare OSError/RuntimeError."""
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:
        raise UserError(
            f"cannot follow {what}: {exc}",
            "if a file or link there is being replaced, try again; a symlink loop must be removed",
        ) from exc


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once (temp file in the same folder, fsync,
    rename, fsync the folder); a reader sees the old bytes or the new, never a mix."""
    staged = stage(path, data)
    try:
        put_in_place(staged, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staged)
        raise


STAGED_SUFFIX = ".tmp"


def stage(path: Path, data: bytes) -> Path:
    """``data`` written and synced to a temp file beside ``path`` (``.<name>.<random>.tmp``,
    :func:`staged_target` reads the name back), ready for :func:`put_in_place`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=STAGED_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return Path(tmp)


def put_in_place(staged: Path, path: Path) -> None:
    """Rename a staged file over ``path`` and sync the folder (the rename is durable)."""
    os.replace(staged, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def staged_target(staged: Path) -> Path | None:
    """The file a staged temp file was made for (None for other names)."""
    name = staged.name
    if not (name.startswith(".") and name.endswith(STAGED_SUFFIX)):
        return None
    target = name[1:].removesuffix(STAGED_SUFFIX).rpartition(".")[0]  # less the random part
    return staged.with_name(target) if target else None
