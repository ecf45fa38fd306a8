from __future__ import annotations

import json
from pathlib import Path

import pytest

from memserver.clients.config import Settings, TLSSettings, load_settings, redacted
from memserver.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_and_no_env_gives_local_defaults() -> None:
    settings = load_settings(None, env={})
    assert settings.llm is None and settings.rerank is None and settings.laya is None
    assert settings.embedding.options["provider"] == "local"
    assert settings.mcp.base_url is None
    assert settings.tls == TLSSettings()
    assert settings.database_url is None and settings.budget_tokens is None


def test_env_only_llm_and_key_never_shown() -> None:
    env = {
        "LLM_BASE_URL": "http://localhost:11434/v1/",
        "LLM_MODEL": "qwen3",
        "LLM_API_KEY": "sk-secret",
    }
    settings = load_settings(None, env=env)
    assert settings.llm is not None
    assert settings.llm.base_url == "http://localhost:11434/v1"
    assert settings.llm.model == "qwen3"
    assert settings.llm.api_key == "sk-secret"
    assert "sk-secret" not in repr(settings)
    assert "sk-secret" not in json.dumps(redacted(settings))
    assert redacted(settings)["llm"]["api_key"] == "***"


def test_llm_base_url_without_model_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"llm\.model: a model is required"):
        load_settings(None, env={"LLM_BASE_URL": "http://localhost:8000/v1"})


def test_env_overrides_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "llm:\n  base_url: http://file/v1\n  model: file-model\n")
    settings = load_settings(path, env={"LLM_MODEL": "env-model"})
    assert settings.llm is not None
    assert (settings.llm.base_url, settings.llm.model) == ("http://file/v1", "env-model")


def test_config_example_documents_a_loadable_config() -> None:
    # No paid model unless asked for: the llm block is off as shipped, on with the env.
    assert load_settings(ROOT / "config.example.yaml", env={"LLM_API_KEY": "k"}).llm is None
    env = {"LLM_API_KEY": "k", "LLM_BASE_URL": "https://api.openai.com/v1", "LLM_MODEL": "m"}
    settings = load_settings(ROOT / "config.example.yaml", env=env)
    assert settings.llm is not None and settings.llm.model == "m"
    assert settings.llm.api_key == "k"
    assert settings.llm.options["max_retries"] == 3
    assert settings.rerank is None and settings.laya is None
    assert settings.embedding.options["batch_size"] == 64
    assert settings.mcp.options["token_env"] == "MEMORY_TOKEN"


def test_config_example_mentions_every_key() -> None:
    from memserver.clients.config import (
        _BLOCK_KEYS,
        _BUDGET_KEYS,
        _SOURCES_KEYS,
        _TLS_KEYS,
        _TOP_KEYS,
    )

    text = (ROOT / "config.example.yaml").read_text(encoding="utf-8")
    keys = {
        *_TOP_KEYS,
        *_TLS_KEYS,
        *_BUDGET_KEYS,
        *_SOURCES_KEYS,
        *(k for keys in _BLOCK_KEYS.values() for k in keys),
    }
    missing = sorted(key for key in keys if f"{key}:" not in text)
    assert missing == []


def test_unknown_keys_are_all_named_with_their_path(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "embeding: {}\nllm:\n  base_url: http://x/v1\n  model: m\n  tls:\n    cafile: a.pem\n"
        "laya:\n  treshold: 0.4\n",
    )
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    message = str(info.value)
    assert "3 configuration problems" in message
    for key in (
        "embeding: unknown key",
        "llm.tls.cafile: unknown key",
        "laya.treshold: unknown key",
    ):
        assert key in message
    assert str(path) in message


def test_api_key_in_the_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "rerank:\n  base_url: http://r\n  api_key: sk-leak\n")
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    assert "rerank.api_key: keys are never read from config.yaml" in str(info.value)
    assert "sk-leak" not in str(info.value)


def test_api_key_env_names_the_variable(tmp_path: Path) -> None:
    path = write(tmp_path, "laya:\n  base_url: http://laya:8000\n  api_key_env: MY_LAYA_KEY\n")
    settings = load_settings(path, env={"MY_LAYA_KEY": "secret", "LAYA_API_KEY": "other"})
    assert settings.laya is not None and settings.laya.api_key == "secret"
    assert settings.laya.options["threshold"] == 0.5


def test_tls_blocks_override_only_the_fields_they_set(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "tls:\n  ca_file: certs/corp.pem\n"
        "llm:\n  base_url: https://llm/v1\n  model: m\n"
        "laya:\n  base_url: https://laya\n  tls:\n    insecure_skip_verify: true\n"
        "rerank:\n  base_url: https://rr\n  tls:\n    ca_file: /etc/other.pem\n",
    )
    settings = load_settings(path, env={})
    corp = str(tmp_path / "certs" / "corp.pem")  # relative to the config file
    assert settings.tls == TLSSettings(corp, False)
    assert settings.llm is not None and settings.llm.tls == TLSSettings(corp, False)
    assert settings.laya is not None and settings.laya.tls == TLSSettings(corp, True)
    assert settings.rerank is not None and settings.rerank.tls == TLSSettings(
        "/etc/other.pem", False
    )
    assert settings.embedding.tls == settings.mcp.tls == TLSSettings(corp, False)


def test_tls_env_overrides_the_default_not_the_blocks(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "tls:\n  ca_file: /file.pem\nrerank:\n  base_url: https://rr\n  tls:\n    ca_file: /rr.pem\n",
    )
    settings = load_settings(
        path, env={"MEMORY_CA_FILE": "/env.pem", "MEMORY_TLS_INSECURE": "true"}
    )
    assert settings.tls == TLSSettings("/env.pem", True)
    assert settings.embedding.tls == TLSSettings("/env.pem", True)
    assert settings.rerank is not None and settings.rerank.tls == TLSSettings("/rr.pem", True)
    with pytest.raises(ConfigError, match="MEMORY_TLS_INSECURE: 'maybe' is not true or false"):
        load_settings(None, env={"MEMORY_TLS_INSECURE": "maybe"})


def test_database_url_budget_and_mcp(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "database_url: postgresql://u:pw@db/kb\nbudget:\n  max_tokens: 5000\n"
        "mcp:\n  url: http://127.0.0.1:8765/mcp\n  token_env: AGENT_TOKEN\n",
    )
    settings = load_settings(path, env={"AGENT_TOKEN": "tok"})
    assert settings.database_url == "postgresql://u:pw@db/kb"
    assert "pw@db" not in repr(settings)
    assert settings.budget_tokens == 5000
    assert (settings.mcp.base_url, settings.mcp.api_key) == ("http://127.0.0.1:8765/mcp", "tok")
    env = {
        "DATABASE_URL": "postgresql://other/kb",
        "MEMORY_BUDGET_TOKENS": "42",
        "MEMORY_URL": "http://remote/mcp",
        "MEMORY_TOKEN": "ignored: token_env says AGENT_TOKEN",
    }
    settings = load_settings(path, env=env)
    assert settings.database_url == "postgresql://other/kb"
    assert settings.budget_tokens == 42
    assert settings.mcp.base_url == "http://remote/mcp" and settings.mcp.api_key is None


def test_openai_embeddings_default_to_the_llm_endpoint(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "llm:\n  base_url: http://vllm/v1\n  model: m\nembedding:\n  provider: openai\n"
        "  model: bge-m3\n  dims: 1024\n",
    )
    settings = load_settings(path, env={"LLM_API_KEY": "k"})
    assert settings.embedding.base_url == "http://vllm/v1"
    assert settings.embedding.api_key == "k"
    assert settings.embedding.options["dims"] == 1024


def test_the_local_embedder_reads_its_texts_a_call(tmp_path: Path) -> None:
    from memserver.clients.embed import LocalEmbedder, embedder_from_settings

    settings = load_settings(write(tmp_path, "embedding:\n  texts_per_call: 8\n"), env={})
    embedder = embedder_from_settings(settings.embedding)
    assert isinstance(embedder, LocalEmbedder) and embedder.texts_per_call == 8
    default = embedder_from_settings(load_settings(None, env={}).embedding)
    assert isinstance(default, LocalEmbedder) and default.texts_per_call == 1
    with pytest.raises(ConfigError, match=r"embedding\.texts_per_call"):
        load_settings(write(tmp_path, "embedding:\n  texts_per_call: 0\n"), env={})


def test_bad_values_name_their_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "embedding:\n  provider: magic\n  dims: -3\nlaya:\n  base_url: laya:8000\n  threshold: 2\n"
        "llm:\n  base_url: http://x/v1\n  model: m\n  timeout: 0\n  max_retries: many\n"
        "tls:\n  insecure_skip_verify: 'yes'\nbudget: 10\n",
    )
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    message = str(info.value)
    for key in (
        "embedding.provider",
        "embedding.dims",
        "laya.base_url",
        "laya.threshold",
        "llm.timeout",
        "llm.max_retries",
        "tls.insecure_skip_verify",
        "budget: must be a mapping",
    ):
        assert key in message


def test_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "absent.yaml", env={})
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_settings(write(tmp_path, "llm: [unclosed\n"), env={})
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_settings(write(tmp_path, "- a list\n"), env={})


def test_settings_are_frozen() -> None:
    settings = load_settings(None, env={})
    assert isinstance(settings, Settings)
    with pytest.raises(AttributeError):
        settings.database_url = "x"  # type: ignore[misc]


def test_laya_base_url_from_the_environment_turns_laya_on() -> None:
    settings = load_settings(None, env={"LAYA_BASE_URL": "http://laya:8000/"})
    assert settings.laya is not None and settings.laya.base_url == "http://laya:8000"
    with pytest.raises(ConfigError, match="LAYA_BASE_URL: 'laya:8000' is not an http"):
        load_settings(None, env={"LAYA_BASE_URL": "laya:8000"})
