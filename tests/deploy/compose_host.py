"""docker-compose.yml's services run as host processes, for a test without Docker.

``HostStack(compose_file, database_url, workdir, variables)`` reads the file and starts
each service that has a ``command`` (those behind a profile are left out), in the order
``depends_on`` gives, each with its ``environment`` as it would run in its container:

- ``${VAR:-default}`` is interpolated from ``variables`` (``$$`` is a literal ``$``);
- ``postgres`` is the test's PostgreSQL: a value naming ``@postgres:5432`` becomes
  ``database_url``;
- each container path becomes a host folder: a named volume's mount point its own
  folder under ``workdir/volumes`` (shared by the services that mount it), ``/app`` (the
  image's working directory, a copy of the repository) the repository, ``/tmp`` a
  folder of the service's own;
- each port a service ``expose``s is a free loopback port: ``0.0.0.0:PORT`` in its own
  command and ``SERVICE:PORT`` anywhere become ``127.0.0.1:<that port>``;
- ``depends_on`` is waited for: ``service_healthy`` by running the dependency's
  ``healthcheck`` command until it passes, ``service_completed_successfully`` by the
  process exiting 0. Every wait is bounded.

Each service's output goes to ``workdir/logs/<service>.log``, quoted in every error.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
APP_DIR = "/app"  # the image's WORKDIR (Dockerfile): the repository's files
DATABASE_SERVICE = "postgres"
_VARIABLE = re.compile(r"\$\$|\$\{(\w+)(?::?-([^}]*))?\}")


def interpolate(text: str, variables: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return variables.get(match.group(1)) or match.group(2) or ""

    return _VARIABLE.sub(value, text)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def load_compose(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and isinstance(data.get("services"), dict)
    return data


def start_order(services: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Services in an order where each comes after what it depends on (file order otherwise)."""
    done: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"depends_on cycle: {' -> '.join((*path, name))}"
        if name in done:
            return
        for dep in services[name].get("depends_on") or {}:
            visit(dep, (*path, name))
        done.append(name)

    for name in services:
        visit(name, ())
    return done


@dataclass
class Service:
    name: str
    spec: Mapping[str, Any]
    argv: list[str]
    env: dict[str, str]
    health: list[str] | None
    log: Path
    process: subprocess.Popen[bytes] | None = None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-chars:]
        except FileNotFoundError:
            return "(no output)"


@dataclass
class HostStack:
    compose_file: Path
    database_url: str
    workdir: Path
    variables: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 240.0
    services: dict[str, Service] = field(default_factory=dict)
    ports: dict[tuple[str, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.compose = load_compose(self.compose_file)
        (self.workdir / "logs").mkdir(parents=True, exist_ok=True)

    # -- the mapping ---------------------------------------------------------------------

    def volume(self, name: str) -> Path:
        path = self.workdir / "volumes" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _paths(self, name: str, spec: Mapping[str, Any]) -> dict[str, str]:
        paths = {APP_DIR: str(REPO), "/tmp": str(self._own_tmp(name))}
        for mount in spec.get("volumes") or ():
            source, target = interpolate(str(mount), self.variables).split(":")[:2]
            if "/" in source or source.startswith("."):
                paths[target] = str((REPO / source).resolve())
            else:
                paths[target] = str(self.volume(source))
        return paths

    def _own_tmp(self, name: str) -> Path:
        path = self.workdir / "tmp" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _map(self, name: str, text: str, paths: Mapping[str, str]) -> str:
        text = interpolate(text, self.variables)
        # One pass over every container path (a host path put in is never read again).
        targets = "|".join(re.escape(t) for t in sorted(paths, key=len, reverse=True))
        text = re.sub(rf"(?<![\w/.-])(?:{targets})(?=/|\b|$)", lambda m: paths[m[0]], text)
        for (service, port), host_port in self.ports.items():
            here = f"127.0.0.1:{host_port}"
            if service == name:
                text = re.sub(rf"(?:0\.0\.0\.0|127\.0\.0\.1):{port}\b", here, text)
            text = re.sub(rf"(?<![\w.-]){re.escape(service)}:{port}\b", here, text)
        return text

    def _environment(
        self, name: str, spec: Mapping[str, Any], paths: Mapping[str, str]
    ) -> dict[str, str]:
        env = {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(self._own_tmp(name)),
            "LANG": "C.UTF-8",
        }
        given = spec.get("environment") or {}
        if isinstance(given, list):
            given = dict(item.split("=", 1) for item in given)
        for key, raw in given.items():
            value = interpolate(str(raw if raw is not None else ""), self.variables)
            if f"@{DATABASE_SERVICE}:" in value:
                env[key] = self.database_url
            else:
                env[key] = self._map(name, value, paths)
        return env

    def _health(
        self, name: str, spec: Mapping[str, Any], paths: Mapping[str, str]
    ) -> list[str] | None:
        check = (spec.get("healthcheck") or {}).get("test")
        if not check:
            return None
        if isinstance(check, str):
            return ["sh", "-c", self._map(name, check, paths)]
        kind, *rest = check
        if kind == "CMD-SHELL":
            return ["sh", "-c", self._map(name, rest[0], paths)]
        assert kind == "CMD", f"{name}: healthcheck test {check!r}"
        return [self._map(name, part, paths) for part in rest]

    def runnable(self) -> list[str]:
        """Services the stack starts here: a command, no profile, not the database."""
        services = self.compose["services"]
        return [
            name
            for name in start_order(services)
            if name != DATABASE_SERVICE
            and not services[name].get("profiles")
            and services[name].get("command")
        ]

    # -- running ------------------------------------------------------------------------

    def up(self) -> None:
        services = self.compose["services"]
        names = self.runnable()
        for name in names:
            for port in services[name].get("expose") or ():
                self.ports[(name, str(port))] = free_port()
        for name in names:
            spec = services[name]
            paths = self._paths(name, spec)
            command = spec["command"]
            argv = command.split() if isinstance(command, str) else list(command)
            self.services[name] = Service(
                name,
                spec,
                [self._map(name, str(part), paths) for part in argv],
                self._environment(name, spec, paths),
                self._health(name, spec, paths),
                self.workdir / "logs" / f"{name}.log",
            )
        for name in names:
            for dep, rule in (services[name].get("depends_on") or {}).items():
                if dep in self.services:
                    self._wait_for(dep, (rule or {}).get("condition", "service_started"))
            self.start(name)

    def start(self, name: str) -> Service:
        service = self.services[name]
        with open(service.log, "ab") as log:
            service.process = subprocess.Popen(
                service.argv,
                env=service.env,
                cwd=service.env["HOME"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return service

    def run_once(self, name: str) -> subprocess.CompletedProcess[bytes]:
        """Run a service's command again to its end (a one-shot service started twice)."""
        service = self.services[name]
        return subprocess.run(
            service.argv, env=service.env, cwd=service.env["HOME"], capture_output=True,
            timeout=self.timeout, check=False,
        )  # fmt: skip

    def _wait_for(self, name: str, condition: str) -> None:
        if condition == "service_completed_successfully":
            self.wait_exit(name)
        elif condition == "service_healthy":
            self.wait_healthy(name)

    def wait_exit(self, name: str) -> None:
        service = self.services[name]
        assert service.process is not None
        try:
            code = service.process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"{name} did not finish in {self.timeout}s:\n{service.log_tail()}"
            ) from None
        assert code == 0, f"{name} exited {code}:\n{service.log_tail()}"

    def healthy(self, name: str) -> bool:
        service = self.services[name]
        assert service.health is not None, f"{name} has no healthcheck"
        check = subprocess.run(
            service.health, env=service.env, cwd=service.env["HOME"], capture_output=True,
            timeout=30, check=False,
        )  # fmt: skip
        return check.returncode == 0

    def wait_healthy(self, name: str) -> None:
        service = self.services[name]
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            assert service.process is not None
            if service.process.poll() is not None:
                raise AssertionError(
                    f"{name} exited {service.process.returncode}:\n{service.log_tail()}"
                )
            if self.healthy(name):
                return
            time.sleep(0.5)  # the interval between two healthchecks, as compose's
        raise AssertionError(f"{name} not healthy after {self.timeout}s:\n{service.log_tail()}")

    def url(self, service: str, port: str) -> str:
        return f"http://127.0.0.1:{self.ports[(service, port)]}"

    def down(self) -> None:
        running = [s for s in self.services.values() if s.process and s.process.poll() is None]
        for service in reversed(running):
            assert service.process is not None
            os.killpg(service.process.pid, signal.SIGTERM)
        for service in running:
            assert service.process is not None
            try:
                service.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(service.process.pid, signal.SIGKILL)
                service.process.wait(timeout=10)


def commands(compose: Mapping[str, Any]) -> Sequence[str]:
    """Every service's command as one string (for checks on what they run)."""
    out = []
    for spec in compose["services"].values():
        command = spec.get("command") or ""
        out.append(command if isinstance(command, str) else " ".join(map(str, command)))
    return out
