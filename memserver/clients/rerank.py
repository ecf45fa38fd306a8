"""The optional cross-encoder reranker behind ``POST {base_url}/rerank`` (Jina, Cohere,
vLLM and TEI shapes), called directly through ``httpx2``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx2

from memserver.clients import tls
from memserver.clients.config import EndpointSettings
from memserver.clients.endpoint_errors import root_message
from memserver.errors import ConfigError, LLMError


class Reranker:
    """An optional cross-encoder behind ``POST {base_url}/rerank``.

    Sends the Jina/Cohere/vLLM shape ``{"model", "query", "documents"}``; a server that
    answers 422 gets the TEI shape ``{"query", "texts"}`` instead (remembered). Reads
    ``{"results": [{"index", "relevance_score"}]}`` or TEI's ``[{"index", "score"}]``.
    Callers keep their own order when this raises LLMError.
    """

    def __init__(
        self, endpoint: EndpointSettings, *, http_client: httpx2.Client | None = None
    ) -> None:
        if not endpoint.base_url:
            raise ConfigError(f"{endpoint.name}: base_url is required", "set rerank.base_url")
        self.endpoint = endpoint
        self.url = f"{endpoint.base_url}/rerank"
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        self._http = http_client if http_client is not None else tls.http_client(endpoint, headers)
        self._tei = False

    def close(self) -> None:
        self._http.close()

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score per document, in the documents' order (higher = better)."""
        if not documents:
            return []
        response = self._post(self._body(query, documents))
        if response.status_code == 422 and not self._tei:
            self._tei = True
            response = self._post(self._body(query, documents))
        if response.status_code >= 400:
            raise LLMError(
                f"{self.endpoint.name}: {self.url} answered HTTP {response.status_code}: "
                f"{response.text[:300]}",
                f"check {self.endpoint.name}.base_url and {self.endpoint.name}.model",
            )
        return self._scores(response, len(documents))

    def _body(self, query: str, documents: Sequence[str]) -> dict[str, Any]:
        if self._tei:
            return {"query": query, "texts": list(documents)}
        body: dict[str, Any] = {
            "query": query,
            "documents": list(documents),
            "top_n": len(documents),
        }
        if self.endpoint.model:
            body["model"] = self.endpoint.model
        return body

    def _post(self, body: dict[str, Any]) -> httpx2.Response:
        try:
            return self._http.post(self.url, json=body, timeout=self.endpoint.timeout)
        except httpx2.TimeoutException as exc:
            raise LLMError(
                f"{self.endpoint.name}: {self.url} timed out after {self.endpoint.timeout:g}s",
                f"raise {self.endpoint.name}.timeout or check the reranker's load",
            ) from exc
        except httpx2.HTTPError as exc:
            raise LLMError(
                f"{self.endpoint.name}: cannot reach {self.url}: {root_message(exc)}"
            ) from exc

    def _scores(self, response: httpx2.Response, count: int) -> list[float]:
        try:
            payload = response.json()
            items = payload["results"] if isinstance(payload, dict) else payload
            scores = [0.0] * count
            for item in items:
                index = int(item["index"])
                value = item.get("relevance_score", item.get("score"))
                if 0 <= index < count and value is not None:
                    scores[index] = float(value)
            return scores
        except (ValueError, KeyError, TypeError) as exc:
            raise LLMError(
                f"{self.endpoint.name}: {self.url} answered in an unknown shape: "
                f"{response.text[:200]}",
                "use a Jina/Cohere/vLLM or TEI compatible /rerank endpoint",
            ) from exc
