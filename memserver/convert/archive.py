"""Zip archives (a ``.docx``, a ``.pptx`` or a Slack export) opened with limits:
a zip bomb is refused from its directory, before anything is unpacked."""

from __future__ import annotations

import io
import zipfile

from memserver.convert.errors import ConversionError

MAX_UNPACKED_BYTES = 256 * 1024 * 1024
MAX_MEMBERS = 20_000
MAX_RATIO = 200  # unpacked / packed, for members over 1 MiB


def open_zip(data: bytes, name: str) -> zipfile.ZipFile:
    """The archive, once its directory shows nothing a bomb would: too many members, too
    many unpacked bytes, a member packed more than ``MAX_RATIO`` times, an encrypted one."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise ConversionError(
            f"{name} is not a valid zip archive ({exc}); the file is corrupt or truncated",
            "save or export it again",
        ) from None
    infos = archive.infolist()
    total = sum(i.file_size for i in infos)
    if len(infos) > MAX_MEMBERS or total > MAX_UNPACKED_BYTES:
        raise ConversionError(
            f"{name} would unpack to {total:,} bytes in {len(infos):,} files, over the limit "
            f"of {MAX_UNPACKED_BYTES:,} bytes in {MAX_MEMBERS:,} files (a zip bomb?)",
            "split the export into smaller archives",
        )
    for info in infos:
        if info.flag_bits & 0x1:
            raise ConversionError(
                f"{name} is encrypted ({info.filename} needs a password)",
                "save it again without a password",
            )
        if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise ConversionError(
                f"{name}: {info.filename} unpacks {info.file_size // max(info.compress_size, 1):,} "
                f"times its packed size, over the limit of {MAX_RATIO} (a zip bomb?)",
                "remove the file, or export it again",
            )
    return archive


def zip_files(data: bytes, name: str) -> dict[str, bytes]:
    """Every regular member of a checked archive, ``{path: bytes}`` (folders skipped)."""
    archive = open_zip(data, name)
    try:
        return {i.filename: archive.read(i) for i in archive.infolist() if not i.is_dir()}
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ConversionError(f"{name} is corrupt ({exc})", "export it again") from None
