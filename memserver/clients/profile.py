"""How much to ask of a chat model: the ``small`` and ``standard`` profiles.

A 1.5B model on a laptop and a hosted frontier model both speak the OpenAI wire format,
but they do not do the same work well. ``llm.profile`` (or ``LLM_PROFILE``) picks:

- **standard** (hosted models, local models of about 7B parameters and up): the model
  writes whole pages from a note, merges sections, helps route notes and questions, and
  the read agent lets it call the memory server's tools;
- **small** (local models up to about 4B: Qwen2.5 0.5B-3B, Llama 3.2 1B/3B, Gemma 2 2B,
  Phi-3 mini): the rules extractor reads the note first and the model only fills the
  fields it left empty, from a short prompt; sections are merged by rules; routing stays
  lexical (a slow, unsure model call per question helps nobody); the read agent searches
  itself and asks the model only to write the answer from the evidence it found.

``auto`` (the default) reads the model id: a size of at most 4B written in it
(``qwen2.5:1.5b``, ``Llama-3.2-3B-Instruct``, ``gemma-2-2b-it``) means small, anything
else standard. An id that names no size (``qwen``, ``local-model``) is standard: set the
profile when the model is small.

``llm.tools`` (``LLM_TOOLS``) overrides whether the read agent offers tools to the
model: ``on``, ``off``, or ``auto`` (the profile's choice: standard tries the tools and
switches to writing from evidence when the model cannot drive them; small writes from
evidence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from memserver.clients.config import EndpointSettings, Settings

SMALL_MAX_BILLIONS = 4.0
# A model call made while serving an MCP request gets at most this share of the MCP
# request timeout, so the tool answers (having fallen back) before its caller gives up.
SERVER_CALL_SHARE = 0.5
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*b(?![a-z])", re.IGNORECASE)
_SIZE_INSIDE = re.compile(r"[-_:/](\d+(?:\.\d+)?)b(?![a-z])", re.IGNORECASE)


@dataclass(frozen=True)
class ModelProfile:
    """What the agents ask of one model (see the module docstring)."""

    name: str
    source_chars: int  # how much of a note an extraction prompt quotes
    titles: int  # existing page titles an extraction prompt lists
    fill_from_rules: bool  # the rules extract first, the model fills the empty fields
    merge_by_model: bool  # the model rewrites a page's sections on merge
    route_by_model: bool  # routing (kb_route, kb_query) asks the model
    evidence_lines: int  # evidence lines the model writes an answer from
    evidence_chars: int  # the evidence prompt's cap
    max_steps: int  # tool-loop turns before the model must answer
    tools: str  # "auto", "on" or "off" (the read agent's tool loop)
    max_tokens: int | None  # the longest answer asked for (None: the provider's)

    @property
    def small(self) -> bool:
        return self.name == "small"


STANDARD = ModelProfile(
    name="standard",
    source_chars=60_000,
    titles=300,
    fill_from_rules=False,
    merge_by_model=True,
    route_by_model=True,
    evidence_lines=12,
    evidence_chars=12_000,
    max_steps=6,
    tools="auto",
    max_tokens=None,
)
SMALL = ModelProfile(
    name="small",
    source_chars=2_000,
    titles=40,
    fill_from_rules=True,
    merge_by_model=False,
    route_by_model=False,
    evidence_lines=6,
    evidence_chars=2_500,
    max_steps=4,
    tools="off",
    max_tokens=300,
)
PROFILES = {"small": SMALL, "standard": STANDARD}


def model_size(model: str) -> float | None:
    """Billions of parameters the model id names (``qwen2.5:1.5b`` -> 1.5), or None."""
    for pattern in (_SIZE_INSIDE, _SIZE):
        match = pattern.search(model)
        if match:
            return float(match.group(1))
    return None


def profile_name(model: str | None, configured: str = "auto") -> str:
    """``small`` or ``standard``: the configured one, else read off the model id."""
    if configured in PROFILES:
        return configured
    size = model_size(model or "")
    return "small" if size is not None and size <= SMALL_MAX_BILLIONS else "standard"


def profile_for(endpoint: EndpointSettings | None) -> ModelProfile:
    """The profile of the configured model (standard without one), ``llm.tools`` applied."""
    if endpoint is None:
        return STANDARD
    options = endpoint.options
    profile = PROFILES[profile_name(endpoint.model, str(options.get("profile", "auto")))]
    tools = str(options.get("tools", "auto"))
    return replace(profile, tools=tools) if tools in ("on", "off") else profile


def server_call_deadline(settings: Settings) -> float:
    """Seconds a model call inside an MCP tool (routing, query rewrites) may take."""
    llm_timeout = settings.llm.timeout if settings.llm is not None else settings.mcp.timeout
    return max(1.0, min(llm_timeout, SERVER_CALL_SHARE * settings.mcp.timeout))
