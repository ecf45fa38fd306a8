"""Client for the laya decision engine (``POST /v1/systemone``), used to route text.

laya answers typed questions about a text ("state") in one forward pass. Routing asks
one yes/no (``noul``) question per schema folder, built from the folder's description,
so a text can belong to several folders. Wire format::

    {"state": TEXT, "model": "jev-latest", "min_confidence": 0.6,
     "questions": {"<id>": {"type": "noul", "instructions": "...",
                            "criteria": {"true": "...", "false": "..."}}}}
    -> {"answers": {"<id>": {"type": "noul", "noul": P_YES, "confidence": ...,
                             "answer_confidence": ...}}, "usage": {...}}

``answer_confidence`` is laya's calibrated probability that its yes/no answer is right,
so the calibrated P(yes) is ``answer_confidence`` when ``noul >= 0.5`` and
``1 - answer_confidence`` otherwise; without it we use ``noul``. Limits: 64 questions a
call (more are split into several calls) and 50,000 characters of state (the state is
truncated). Errors come as ``{"detail": ...}`` or ``{"error": {"message", "field"}}``;
both are read. A 503 is retried after its ``Retry-After`` (capped), as are 500s and
refused connections, a bounded number of times; then LayaError.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx2

from memserver.clients import tls
from memserver.clients.config import EndpointSettings
from memserver.clients.endpoint_errors import retry_after, root_message
from memserver.errors import ConfigError, LayaError
from memserver.kb.schema import FolderSpec

log = logging.getLogger(__name__)

MAX_QUESTIONS = 64
MAX_STATE_CHARS = 50_000
DEFAULT_MODEL = "jev-latest"


@dataclass(frozen=True)
class NoulQuestion:
    """A yes/no question: what to decide, and what makes the answer true or false."""

    instructions: str
    when_true: str
    when_false: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": "noul",
            "instructions": self.instructions,
            "criteria": {"true": self.when_true, "false": self.when_false},
        }


@dataclass(frozen=True)
class NoulAnswer:
    """laya's answer: raw ``noul`` (P(yes)) and its confidences when given."""

    noul: float
    confidence: float | None = None
    answer_confidence: float | None = None

    @property
    def p_yes(self) -> float:
        """Calibrated probability of "yes" (see the module docstring)."""
        if self.answer_confidence is None:
            return self.noul
        return self.answer_confidence if self.noul >= 0.5 else 1.0 - self.answer_confidence


def folder_question(folder: FolderSpec) -> NoulQuestion:
    """The routing question for one folder, built from its name and description."""
    about = folder.description.strip().rstrip(".") or folder.name
    return NoulQuestion(
        instructions=(
            f'Does this text belong in the "{folder.name}" folder of a company knowledge '
            f"base? That folder holds: {about}."
        ),
        when_true=f"The text is about, or records something that belongs in, {folder.name}: {about}.",
        when_false=f"Nothing in the text belongs in {folder.name}.",
    )


class LayaClient:
    """A small sync client for one laya sidecar.

    ``max_attempts`` bounds each call; ``max_wait`` caps any single wait (including a
    server's ``Retry-After``), so a sick sidecar costs routing seconds, not minutes.
    """

    def __init__(
        self,
        endpoint: EndpointSettings,
        *,
        max_attempts: int = 2,
        backoff: float = 0.25,
        max_wait: float = 2.0,
        http_client: httpx2.Client | None = None,
    ) -> None:
        if not endpoint.base_url:
            raise ConfigError("laya: base_url is required", "set laya.base_url in config.yaml")
        self.endpoint = endpoint
        self.base_url = endpoint.base_url
        self.model = endpoint.model or DEFAULT_MODEL
        self.min_confidence: float | None = endpoint.options.get("min_confidence")
        self.max_attempts = max(1, max_attempts)
        self.backoff = backoff
        self.max_wait = max_wait
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        self._http = http_client if http_client is not None else tls.http_client(endpoint, headers)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LayaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def health(self) -> bool:
        """True when ``GET /health`` answers 2xx; never raises."""
        try:
            return self._http.get(f"{self._root()}/health", timeout=2.0).is_success
        except httpx2.HTTPError:
            return False

    def ask(self, state: str, questions: Mapping[str, NoulQuestion]) -> dict[str, NoulAnswer]:
        """Answers by question id; over 64 questions are asked in several calls."""
        if len(state) > MAX_STATE_CHARS:
            log.info("laya: state of %d characters truncated to %d", len(state), MAX_STATE_CHARS)
            state = state[:MAX_STATE_CHARS]
        ids = list(questions)
        answers: dict[str, NoulAnswer] = {}
        for start in range(0, len(ids), MAX_QUESTIONS):
            batch = {qid: questions[qid].as_dict() for qid in ids[start : start + MAX_QUESTIONS]}
            body: dict[str, Any] = {"state": state, "model": self.model, "questions": batch}
            if self.min_confidence is not None:
                body["min_confidence"] = self.min_confidence
            answers.update(self._answers(self._post(body), set(batch)))
        return answers

    def folder_scores(self, text: str, folders: Sequence[FolderSpec]) -> dict[str, float]:
        """Calibrated P(the text belongs in the folder), by folder name."""
        answers = self.ask(text, {folder.name: folder_question(folder) for folder in folders})
        return {name: answer.p_yes for name, answer in answers.items()}

    def _root(self) -> str:
        # base_url may be given with or without the /v1 suffix.
        return self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self._root()}/v1/systemone"
        for attempt in range(1, self.max_attempts + 1):
            last = attempt == self.max_attempts
            try:
                response = self._http.post(url, json=body)
            except httpx2.TimeoutException as exc:
                raise LayaError(
                    f"laya: {url} timed out after {self.endpoint.timeout:g}s",
                    "raise laya.timeout or check the sidecar's load",
                ) from exc
            except httpx2.HTTPError as exc:
                if last:
                    cause = root_message(exc)
                    if cause.startswith("laya: TLS"):
                        raise LayaError(cause) from exc
                    raise LayaError(
                        f"laya: cannot reach {url}: {cause}",
                        "start the laya service or fix laya.base_url; routing falls back "
                        "to the LLM and lexical stages meanwhile",
                    ) from exc
                self._wait(self.backoff * 2 ** (attempt - 1))
                continue
            if response.is_success:
                payload = response.json()
                if not isinstance(payload, dict):
                    raise LayaError(f"laya: {url} answered in an unknown shape")
                return payload
            if response.status_code in (500, 502, 503, 504) and not last:
                self._wait(retry_after(response) or self.backoff * 2 ** (attempt - 1))
                continue
            raise LayaError(
                f"laya: {url} answered HTTP {response.status_code}: {error_message(response)}",
                _hint(response.status_code),
            )
        raise AssertionError("unreachable: the loop returns or raises")

    def _wait(self, seconds: float) -> None:
        time.sleep(min(max(seconds, 0.0), self.max_wait))

    @staticmethod
    def _answers(payload: Mapping[str, Any], asked: set[str]) -> dict[str, NoulAnswer]:
        raw = payload.get("answers")
        if not isinstance(raw, dict):
            raise LayaError("laya: the answer has no 'answers' object")
        answers: dict[str, NoulAnswer] = {}
        for qid, item in raw.items():
            if qid not in asked or not isinstance(item, dict):
                continue
            noul = _number(item.get("noul"))
            if noul is None:
                continue
            answers[qid] = NoulAnswer(
                noul=noul,
                confidence=_number(item.get("confidence")),
                answer_confidence=_number(item.get("answer_confidence")),
            )
        if asked and not answers:
            raise LayaError("laya: the answer holds none of the questions asked")
        return answers


def error_message(response: httpx2.Response) -> str:
    """The message of a laya error body, in either shape it uses."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            message = str(error.get("message") or "unknown error")
            field = error.get("field")
            return f"{message} (field {field})" if field else message
        detail = body.get("detail")
        if isinstance(detail, list):
            parts = []
            for item in detail:
                if isinstance(item, dict):
                    loc = ".".join(str(p) for p in item.get("loc", ()))
                    parts.append(f"{loc}: {item.get('msg', item)}" if loc else str(item))
                else:
                    parts.append(str(item))
            return "; ".join(parts)
        if detail is not None:
            return str(detail)
    return str(body)[:300]


def _hint(status: int) -> str:
    if status == 401:
        return "set the key in the variable named by laya.api_key_env (default LAYA_API_KEY)"
    if status in (400, 422):
        return "the request was refused; check laya.model and that the sidecar is up to date"
    return "the sidecar is failing; routing falls back to the LLM and lexical stages"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
