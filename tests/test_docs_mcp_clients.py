"""docs/mcp-clients.md: every snippet marked ``<!-- run: NAME -->`` is run as written, with
``my_kb``, the address and the secret replaced, against a real server it starts itself.

- ``serve-public``: the server, a subprocess on a free port, at its https public URL;
- ``metadata``: the curl line, run with curl, says where clients sign in;
- ``token``: the CLI prints a secret;
- ``desktop-http``: a client given that JSON (URL and header) lists and calls the tools;
- ``desktop-stdio``: the command, arguments and environment of that JSON start a stdio
  server the SDK client reads resources from;
- ``agent``: the agent script, run with the scripted model, wakes up, calls a tool and
  prints the model's answer.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memserver.db.database import create_database, drop_database, with_database
from tests.fixtures.llm_server import LLMServer, Reply, tool_call
from tests.fixtures.server import copy_example_kb, free_socket, wait_ready

DOC = Path(__file__).resolve().parents[1] / "docs" / "mcp-clients.md"
SNIPPET = re.compile(r"<!-- run: (\S+) -->\n```(\w+)\n(.*?)```", re.S)
MEMSERVER = str(Path(sys.executable).with_name("memserver"))
PUBLIC = "https://memory.example.com"
WAIT = 60.0
# what the person's shell might have set that the snippets must not pick up
_CLEARED = ("LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY")


def snippets() -> dict[str, tuple[str, str]]:
    """``name -> (language, text)`` of the marked snippets, in the page's order."""
    found = {m.group(1): (m.group(2), m.group(3)) for m in SNIPPET.finditer(DOC.read_text())}
    assert list(found) == [
        "token",
        "desktop-http",
        "desktop-stdio",
        "serve-public",
        "metadata",
        "agent",
    ]
    return found


@dataclass
class Served:
    kb: Path
    address: str  # 127.0.0.1:PORT
    env: dict[str, str]

    @property
    def local(self) -> str:
        return f"http://{self.address}"

    def command(self, line: str) -> list[str]:
        """A snippet's shell line with this knowledge base and address."""
        line = line.replace("127.0.0.1:8787", self.address)
        return [
            MEMSERVER if w == "memserver" else w.replace("my_kb", str(self.kb))
            for w in shlex.split(line)
        ]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, pg_url: str) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("docs-clients")
    kb = copy_example_kb(root / "my_kb")
    config = root / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n  dims: 384\n", encoding="utf-8")
    name = f"docs_{uuid.uuid4().hex[:12]}"
    create_database(pg_url, name)
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env |= {"DATABASE_URL": with_database(pg_url, name), "MEMORY_CONFIG": str(config)}
    spare = free_socket()
    address = f"127.0.0.1:{spare.getsockname()[1]}"
    spare.close()
    running = Served(kb, address, env)
    _, line = snippets()["serve-public"]
    log = root / "serve.log"
    with log.open("w", encoding="utf-8") as err:
        process = subprocess.Popen(running.command(line.strip()), env=env, stderr=err)
        try:
            wait_ready(running.local, timeout=WAIT)
            yield running
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=WAIT)
            drop_database(pg_url, name)
    assert process.returncode == 0, log.read_text(encoding="utf-8")[-3000:]


@pytest.fixture(scope="module")
def secret(served: Served) -> str:
    _, line = snippets()["token"]
    done = subprocess.run(
        served.command(line.strip()), env=served.env, capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip()
    assert printed.startswith("ms_") and "shown only once" in done.stderr
    return printed


def test_the_remote_connector_steps_serve_the_metadata_clients_start_from(served: Served) -> None:
    _, line = snippets()["metadata"]
    command = shlex.split(line.strip().replace(PUBLIC, served.local))
    assert command[0] == "curl"
    done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    metadata = json.loads(done.stdout)
    assert metadata["resource"] == f"{PUBLIC}/mcp"
    assert metadata["authorization_servers"] == [PUBLIC]
    server = httpx2.get(f"{served.local}/.well-known/oauth-authorization-server", timeout=WAIT)
    assert server.json()["authorization_endpoint"] == f"{PUBLIC}/authorize"
    # behind the TLS proxy, requests arrive with the public name as Host: it is ours
    for path in ("/.well-known/oauth-authorization-server", "/ui/login", "/healthz"):
        proxied = httpx2.get(served.local + path, headers={"Host": "memory.example.com"})
        assert proxied.status_code == 200, path
        other = httpx2.get(served.local + path, headers={"Host": "evil.example"})
        assert other.status_code == 421, path


def test_a_desktop_client_given_the_http_config_calls_the_tools(
    served: Served, secret: str
) -> None:
    _, text = snippets()["desktop-http"]
    config = json.loads(text.replace("127.0.0.1:8787", served.address).replace("ms_...", secret))
    memory = config["mcpServers"]["memory"]
    assert memory["type"] == "http"

    async def main() -> tuple[set[str], dict[str, Any]]:
        with anyio.fail_after(WAIT):
            async with (
                httpx2.AsyncClient(headers=memory["headers"], timeout=WAIT) as http,
                Client(streamable_http_client(memory["url"], http_client=http)) as client,
            ):
                names = {t.name for t in (await client.list_tools()).tools}
                woke = await client.call_tool("kb_wakeup", {})
                return names, woke.structured_content or {}

    names, woke = anyio.run(main)
    assert {"kb_wakeup", "kb_query", "kb_brief"} <= names
    assert "kb_put_page" not in names  # the snippet's token is read-only
    assert woke["cursor"].startswith("c1:")


def test_a_desktop_client_given_the_stdio_config_starts_its_own_server(
    served: Served, secret: str
) -> None:
    _, text = snippets()["desktop-stdio"]
    config = json.loads(
        text.replace("/path/to/repo/.venv/bin/memserver", MEMSERVER)
        .replace("/path/to/my_kb", str(served.kb))
        .replace("ms_...", secret)
    )
    memory = config["mcpServers"]["memory"]
    # the test's knowledge base uses the test database and the hash embedder
    env = {**memory["env"], **{k: served.env[k] for k in ("DATABASE_URL", "MEMORY_CONFIG")}}
    params = StdioServerParameters(command=memory["command"], args=memory["args"], env=env)

    async def main() -> tuple[list[str], dict[str, Any]]:
        with anyio.fail_after(WAIT):
            async with Client(params, read_timeout_seconds=WAIT) as client:
                listed = await client.list_resources()
                schema = await client.read_resource("kb://schema")
                return [str(r.uri) for r in listed.resources], json.loads(
                    schema.contents[0].text  # type: ignore[union-attr]
                )

    uris, schema = anyio.run(main)
    assert uris[0] == "kb://schema"
    assert [f["name"] for f in schema["folders"]][:2] == ["people", "companies"]


def test_the_agent_script_wakes_up_calls_a_tool_and_prints_the_answer(
    served: Served, secret: str, llm_server: LLMServer, tmp_path: Path
) -> None:
    _, code = snippets()["agent"]
    script = tmp_path / "agent.py"
    script.write_text(code, encoding="utf-8")
    answer = "Nothing was decided this week [schema]."
    llm_server.enqueue(
        Reply(tool_calls=[tool_call("kb_query", {"query": "decided this week"})]), answer
    )
    env = {
        **served.env,
        "MEMORY_URL": f"{served.local}/mcp",
        "MEMORY_TOKEN": secret,
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "test-key",
        "MODEL": "scripted",
    }
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=WAIT * 2
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == answer
    first, second = llm_server.requests
    assert "What changed since" in first["messages"][0]["content"]  # the wake-up brief
    assert any(t["function"]["name"] == "kb_wakeup" for t in first["tools"])
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and "results" in json.loads(tool_message["content"])
