"""Knowledge-base paths: safe names, slugs in any script, source paths that stay inside."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memserver.errors import UserError
from memserver.kb.layout import SLUG_MAX_BYTES, KBPaths, cut_slug, name_problem, slugify


def test_paths_derive_from_the_root(tmp_path: Path) -> None:
    kb = KBPaths.of(tmp_path)
    assert kb.schema == tmp_path / "schema.yaml"
    assert kb.source == tmp_path / "source"
    assert kb.knowledge == tmp_path / "knowledge"
    assert kb.manifest == tmp_path / "manifest.json"
    assert kb.state == tmp_path / ".memserver"
    assert kb.page_path("people", "bob") == tmp_path / "knowledge" / "people" / "bob.md"


def test_page_path_keeps_cyrillic_slugs(tmp_path: Path) -> None:
    kb = KBPaths.of(tmp_path)
    path = kb.page_path("people", "энхтуяа-ганбаатар")
    assert path.name == "энхтуяа-ганбаатар.md"


@pytest.mark.parametrize(
    "slug",
    [
        "../secret",
        "a/b",
        "..",
        ".hidden",
        "",
        "a\x00b",
        "a\nb",
        "a\\b",
        " padded",
        "x" * 201,
        "я" * 101,
    ],
)
def test_page_path_refuses_unsafe_slugs(tmp_path: Path, slug: str) -> None:
    with pytest.raises(UserError, match="refused slug"):
        KBPaths.of(tmp_path).page_path("people", slug)


@pytest.mark.parametrize("folder", ["..", "../..", "a/b", ".git"])
def test_page_path_refuses_unsafe_folders(tmp_path: Path, folder: str) -> None:
    with pytest.raises(UserError, match="refused folder"):
        KBPaths.of(tmp_path).page_path(folder, "bob")


def test_slugify_makes_readable_cyrillic_slugs() -> None:
    assert slugify("Энхтуяа Ганбаатар") == "энхтуяа-ганбаатар"
    assert slugify("Бат-Эрдэнэ  (Монгол) ӨҮ") == "бат-эрдэнэ-монгол-өү"
    assert slugify("Globex: Q3 Kick-off / Review") == "globex-q3-kick-off-review"
    assert slugify("../../etc/passwd") == "etc-passwd"
    assert slugify("Café ﬁnance") == "café-finance"


@pytest.mark.parametrize("text", ["", "   ", "...", "/", "!!!", "\x00\x01"])
def test_slugify_refuses_text_without_letters(text: str) -> None:
    with pytest.raises(UserError, match="cannot make a file name"):
        slugify(text)


@pytest.mark.parametrize(
    "title",
    [
        "漢字仮名交じり文の長い会議の議事録" * 6,  # CJK: 3 bytes a character
        "ᠮᠣᠩᠭᠣᠯ ᠪᠢᠴᠢᠭ ᠦᠨ ᠤᠷᠲᠤ ᠭᠠᠷᠴᠠᠭ " * 5,  # traditional Mongolian, 3 bytes
        "Хуралдааны тэмдэглэл " * 12,  # Cyrillic, 2 bytes
        "🎉 Launch party 🚀 for the new product line " * 6,  # emoji are dropped
        "word " * 100,
    ],
)
def test_slugify_cuts_long_titles_to_200_bytes_with_a_hash(title: str) -> None:
    slug = slugify(title)
    whole = re.sub(r"-{2,}", "-", "".join(c if c.isalnum() else "-" for c in title.lower()))
    assert len(slug.encode("utf-8")) <= SLUG_MAX_BYTES
    assert re.fullmatch(r".+-[0-9a-f]{8}", slug) and "--" not in slug
    assert whole.strip("-").startswith(slug.rsplit("-", 1)[0])  # a prefix, cut cleanly
    assert slugify(title + " two") != slug  # the hash keeps long titles apart
    KBPaths.of(Path("/tmp")).page_path("meetings", slug)  # a name the file system takes


def test_a_cut_never_separates_a_letter_from_its_combining_marks() -> None:
    slug = "a" * 188 + "b" + "\u0301" * 5 + "c" * 20  # the cut falls inside b's marks
    cut = cut_slug(slug)
    assert cut.rsplit("-", 1)[0] == "a" * 188  # b goes with its marks
    assert len(cut.encode()) <= SLUG_MAX_BYTES


def test_short_slugs_are_not_cut() -> None:
    assert slugify("Globex kickoff") == "globex-kickoff"
    assert slugify("漢字" * 30) == "漢字" * 30  # 180 bytes: under the limit, no hash


@given(st.text())
def test_slugify_never_returns_an_unsafe_name(text: str) -> None:
    try:
        slug = slugify(text)
    except UserError:
        return
    assert name_problem(slug) is None
    assert "/" not in slug and ".." not in slug and not slug.startswith(".")
    assert slug == slug.lower()
    assert slugify(slug) == slug


def test_source_rel_normalises_tolerated_forms(tmp_path: Path) -> None:
    kb = KBPaths.of(tmp_path)
    (kb.source / "notes").mkdir(parents=True)
    assert kb.source_rel("notes/a.md") == "notes/a.md"
    assert kb.source_rel("./notes//a.md") == "notes/a.md"
    assert kb.source_rel("source/notes/a.md") == "notes/a.md"


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../schema.yaml", "notes/../../x.md", "", "a\x00.md", "a\\..\\b"]
)
def test_source_paths_that_escape_are_refused(tmp_path: Path, path: str) -> None:
    kb = KBPaths.of(tmp_path)
    kb.source.mkdir()
    with pytest.raises(UserError, match="refused source path"):
        kb.source_file(path)


def test_symlink_escaping_source_is_refused(tmp_path: Path) -> None:
    kb = KBPaths.of(tmp_path / "kb")
    kb.source.mkdir(parents=True)
    outside = tmp_path / "secret.md"
    outside.write_text("secret")
    os.symlink(outside, kb.source / "link.md")
    with pytest.raises(UserError, match="resolves outside source"):
        kb.source_file("link.md")
    (kb.source / "real.md").write_text("fine")
    os.symlink(kb.source / "real.md", kb.source / "inside.md")
    assert kb.source_file("inside.md") == ("inside.md", kb.source / "inside.md")
