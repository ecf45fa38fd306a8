"""test_compose_docker.py needs Docker's compose command (`docker compose version` works):
without it, it is not collected. These machines have none (a bare `docker` client
without the compose plugin at most); tests/deploy/test_compose.py runs the stack without
Docker instead. The README's compose section says so."""

from __future__ import annotations

import shutil
import subprocess


def _compose_works() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(
            ["docker", "compose", "version"], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


collect_ignore = [] if _compose_works() else ["test_compose_docker.py"]
