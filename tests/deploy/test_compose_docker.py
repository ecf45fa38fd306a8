"""With Docker installed: `docker compose config` accepts docker-compose.yml (with and
without the laya profile). Collected only when `docker` is on PATH (see conftest.py)."""

from __future__ import annotations

import subprocess

import pytest

from tests.deploy.compose_host import REPO


@pytest.mark.parametrize("profile", [[], ["--profile", "laya"]])
def test_docker_compose_config_accepts_the_file(profile: list[str]) -> None:
    done = subprocess.run(
        ["docker", "compose", *profile, "-f", str(REPO / "docker-compose.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
