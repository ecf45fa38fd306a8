"""The suite runs on the versions it was tested with: every package that
``constraints.txt`` pins is installed at that version (a venv from an earlier install
that kept older releases fails here, by name, with the command that fixes it). Under
``make test-latest`` (``MEMSERVER_UNPINNED=1``) the pins are being moved on purpose, and
the check is that every installed direct dependency is inside pyproject.toml's range."""

from __future__ import annotations

import os
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
FIX = "run `make install` (it installs with -c constraints.txt)"


def pins() -> dict[str, str]:
    """``{canonical name: version}`` from constraints.txt."""
    found: dict[str, str] = {}
    for line in (REPO / "constraints.txt").read_text("utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not NAME==VERSION"
            found[canonicalize_name(name)] = version.strip()
    return found


def direct() -> list[Requirement]:
    """The project's own requirements, runtime and dev."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    listed = list(project["dependencies"]) + list(project["optional-dependencies"]["dev"])
    return [Requirement(r) for r in listed]


def installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def off_pin(pinned: dict[str, str], have: dict[str, str | None]) -> list[str]:
    """A line for each package installed at another version than its pin."""
    return [
        f"{name} {have[name]} is installed, but the suite was tested with {name} {version} "
        f"(constraints.txt); {FIX}"
        for name, version in sorted(pinned.items())
        if have.get(name) is not None and have[name] != version
    ]


def test_every_direct_dependency_is_pinned_and_inside_its_range() -> None:
    pinned = pins()
    for requirement in direct():
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement.name} is not in constraints.txt; run `make pins`"
        if requirement.specifier:
            assert requirement.specifier.contains(pinned[name], prereleases=True), (
                f"constraints.txt pins {name} {pinned[name]}, outside pyproject.toml's "
                f"{requirement.specifier}; run `make pins`"
            )


def test_installed_versions_are_the_tested_ones() -> None:
    if os.environ.get("MEMSERVER_UNPINNED"):
        wrong = [
            f"{r.name} {installed(r.name)} is outside pyproject.toml's {r.specifier}"
            for r in direct()
            if installed(r.name) is not None
            and not r.specifier.contains(str(installed(r.name)), prereleases=True)
        ]
        assert not wrong, "; ".join(wrong)
        return
    pinned = pins()
    have = {name: installed(name) for name in pinned}
    missing = [r.name for r in direct() if installed(r.name) is None]
    assert not missing, f"not installed: {', '.join(missing)}; {FIX}"
    wrong = off_pin(pinned, have)
    assert not wrong, "\n".join(wrong)


def test_a_version_off_its_pin_is_named_with_the_fix() -> None:
    lines = off_pin({"lxml": "6.2.0", "mcp": "2.3.0"}, {"lxml": "5.4.0", "mcp": "2.3.0"})
    assert lines == [
        "lxml 5.4.0 is installed, but the suite was tested with lxml 6.2.0 "
        f"(constraints.txt); {FIX}"
    ]


def test_every_install_of_the_project_uses_the_pins() -> None:
    """``make test``, ``make up`` and the image install with constraints.txt; only
    ``make test-latest`` goes without, on purpose."""
    makefile = (REPO / "Makefile").read_text("utf-8")
    lines = [line.strip() for line in makefile.splitlines() if "pip install" in line]
    project = [line for line in lines if " -e " in line and "$(LATEST)" not in line]
    assert len(project) == 2 and all("-c $(PINS)" in line for line in project), project
    dockerfile = (REPO / "Dockerfile").read_text("utf-8")
    assert "pip install --no-cache-dir -c constraints.txt ." in dockerfile
    assert "COPY pyproject.toml README.md constraints.txt" in dockerfile
