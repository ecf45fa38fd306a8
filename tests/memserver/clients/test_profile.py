"""The model profile: small or standard, from llm.profile or read off the model id."""

from __future__ import annotations

from pathlib import Path

import pytest

from memserver.clients.config import load_settings
from memserver.clients.profile import (
    SMALL,
    STANDARD,
    model_size,
    profile_for,
    profile_name,
    server_call_deadline,
)
from memserver.errors import ConfigError

LOCAL = {"LLM_BASE_URL": "http://127.0.0.1:9481/v1"}


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ("qwen2.5:1.5b", 1.5),
        ("qwen2.5-coder-1.5b-instruct-q4_k_m", 1.5),
        ("Llama-3.2-3B-Instruct", 3.0),
        ("gemma-2-2b-it", 2.0),
        ("qwen2.5:7b-instruct", 7.0),
        ("mistral-small-24b", 24.0),
        ("qwen", None),
        ("gpt-4o-mini", None),
        ("text-embedding-3b-large-ish-v1.5bx", 3.0),
    ],
)
def test_the_size_is_read_off_the_model_id(model: str, size: float | None) -> None:
    assert model_size(model) == size


def test_auto_is_small_up_to_4b_and_standard_otherwise_or_when_unsure() -> None:
    assert profile_name("qwen2.5:1.5b") == "small"
    assert profile_name("phi3:3.8b") == "small"
    assert profile_name("qwen2.5:7b-instruct") == "standard"
    assert profile_name("qwen") == "standard"  # no size written: set it by hand
    assert profile_name("qwen", "small") == "small"
    assert profile_name("qwen2.5:1.5b", "standard") == "standard"


def test_profile_and_tools_come_from_the_file_or_the_environment(tmp_path: Path) -> None:
    settings = load_settings(None, env={**LOCAL, "LLM_MODEL": "qwen2.5:1.5b"})
    assert profile_for(settings.llm) == SMALL
    settings = load_settings(None, env={**LOCAL, "LLM_MODEL": "qwen", "LLM_PROFILE": "small"})
    assert profile_for(settings.llm).name == "small"
    config = tmp_path / "config.yaml"
    # YAML reads a bare `off` as false: it still means off
    config.write_text("llm:\n  profile: standard\n  tools: off\n", encoding="utf-8")
    settings = load_settings(config, env={**LOCAL, "LLM_MODEL": "qwen2.5:1.5b"})
    profile = profile_for(settings.llm)
    assert (profile.name, profile.tools, profile.fill_from_rules) == ("standard", "off", False)
    assert profile_for(None) == STANDARD


def test_a_bad_profile_or_tools_value_names_the_key_and_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(None, env={**LOCAL, "LLM_MODEL": "q", "LLM_PROFILE": "tiny"})
    assert "LLM_PROFILE" in str(info.value) and "auto, small, standard" in str(info.value)
    config = tmp_path / "config.yaml"
    config.write_text("llm:\n  tools: sometimes\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"llm\.tools.*auto, on, off"):
        load_settings(config, env={**LOCAL, "LLM_MODEL": "q"})


def test_a_model_call_inside_a_tool_ends_before_the_mcp_request_times_out(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("llm:\n  timeout: 120\nmcp:\n  timeout: 30\n", encoding="utf-8")
    settings = load_settings(config, env={**LOCAL, "LLM_MODEL": "q"})
    assert server_call_deadline(settings) == 15
    config.write_text("llm:\n  timeout: 5\nmcp:\n  timeout: 30\n", encoding="utf-8")
    assert server_call_deadline(load_settings(config, env={**LOCAL, "LLM_MODEL": "q"})) == 5
