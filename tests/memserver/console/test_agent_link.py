"""The console's link to the read agent: where it is configured, and what a person is told
when the read agent does not answer or refuses the console's key (real HTTP)."""

from __future__ import annotations

import anyio
import pytest

from memserver.console.agent_link import AgentUnavailable, ReadAgentLink
from tests.fixtures.server import free_socket
from tests.memserver.console.conftest import AGENT_KEY, ConsoleServer


def test_serve_finds_the_read_agent_in_its_environment() -> None:
    env = {"READ_AGENT_URL": " http://127.0.0.1:8788/ ", "READ_AGENT_API_KEY": "ra_x"}
    assert ReadAgentLink.from_env(env) == ReadAgentLink("http://127.0.0.1:8788", "ra_x")
    assert ReadAgentLink.from_env({"READ_AGENT_API_KEY": "ra_x"}) is None


def test_a_read_agent_that_does_not_answer_is_named_with_how_to_start_one() -> None:
    sock = free_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()  # nothing listens there
    with pytest.raises(AgentUnavailable) as caught:
        anyio.run(ReadAgentLink(url, AGENT_KEY).ask, "Who is Bob Martinez?", [])
    assert f"the read agent at {url} does not answer" in caught.value.message
    assert "memserver up" in caught.value.hint


def test_a_wrong_key_is_named_with_its_fix(console_server: ConsoleServer, read_agent: str) -> None:
    with pytest.raises(AgentUnavailable) as caught:
        anyio.run(ReadAgentLink(read_agent, "ra_wrong").ask, "Who is Bob Martinez?", [])
    assert "refused the console's key" in caught.value.message
    assert "READ_AGENT_API_KEY" in caught.value.hint
