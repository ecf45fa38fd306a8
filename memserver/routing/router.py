"""Routing: which schema folders a text belongs to, with a score each.

The chain is laya -> LLM -> lexical. Each stage that is configured is tried in turn;
one that is down or errors is skipped (its reason lands in ``degraded``), so a missing
sidecar costs accuracy, never availability:

1. **laya**: one calibrated yes/no question per folder (see ``memserver.clients.laya``);
2. **llm**: one JSON call returning a probability per folder;
3. **lexical**: always available. Keyword overlap of the text with each folder's name,
   type, field names and description (rarer words weigh more; 70%), blended with how
   close the text's embedding is to each folder description relative to the closest
   one (30%) when an embedder is given (only the text's first ``EMBED_CHARS``
   characters are embedded: a long note costs one model window, not dozens, on the
   ingest agent's path). It returns at least the best folder whenever any signal
   exists.

Folders scoring at or above ``threshold`` are returned, best first. A stage's answer of
"no folder" is an answer: callers (``kb_query``) retry on the whole scope then.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from memserver.errors import BudgetExceeded, LLMError, LLMTimeout
from memserver.kb.schema import FolderSpec, Schema

if TYPE_CHECKING:
    from memserver.clients.budget import TokenBudget
    from memserver.clients.config import Settings
    from memserver.clients.laya import LayaClient
    from memserver.clients.llm import LLMClient

log = logging.getLogger(__name__)

Embed = Callable[[Sequence[str]], list[np.ndarray]]

LLM_TEXT_CHARS = 12_000
_WORD = re.compile(r"\w+", re.UNICODE)
_STOPWORDS = frozenset(
    [
        "about",
        "after",
        "also",
        "and",
        "any",
        "are",
        "but",
        "can",
        "for",
        "from",
        "has",
        "have",
        "into",
        "its",
        "not",
        "notes",
        "note",
        "one",
        "our",
        "out",
        "page",
        "pages",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
        "here",
        "such",
        "each",
        "other",
        "than",
        "only",
        "more",
        "most",
        "some",
        "all",
        "per",
        "via",
        "any",
        "every",
    ]
)
# Weights of a folder keyword by where it comes from (before rarity weighting).
_NAME_WEIGHT, _FIELD_WEIGHT, _DESCRIPTION_WEIGHT = 1.0, 0.5, 0.3
# Keywords are the stronger lexical signal; embeddings break ties and catch paraphrase.
_KEYWORD_SHARE = 0.7
_COSINE_WINDOW = 0.05
EMBED_CHARS = 2000  # about one e5 window (512 tokens) of English prose


@dataclass(frozen=True)
class FolderScore:
    folder: str
    score: float


@dataclass(frozen=True)
class RouteResult:
    """Selected folders (best first), the stage that answered, and what was degraded.

    ``stage`` is "laya", "llm", "lexical", or "none" (empty text or no folders).
    ``scores`` holds every candidate folder's score from that stage, best first.
    """

    folders: tuple[FolderScore, ...]
    stage: str
    degraded: tuple[str, ...] = ()
    scores: tuple[FolderScore, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(item.folder for item in self.folders)

    def as_dict(self) -> dict[str, Any]:
        return {
            "folders": [{"folder": f.folder, "score": f.score} for f in self.folders],
            "stage": self.stage,
            "degraded": list(self.degraded),
            "scores": [{"folder": f.folder, "score": f.score} for f in self.scores],
        }


class Router:
    """Routes text to folders of ``schema`` through laya -> LLM -> lexical.

    ``embed`` is any callable turning texts into vectors (e.g. an embedder's
    ``embed_passages``); without it the lexical stage uses keyword overlap only.
    """

    def __init__(
        self,
        schema: Schema,
        llm: LLMClient | None = None,
        laya: LayaClient | None = None,
        embed: Embed | None = None,
        threshold: float = 0.5,
    ) -> None:
        self.schema = schema
        self.llm = llm
        self.laya = laya
        self.embed = embed
        self.threshold = threshold
        self._keywords = _folder_keywords(schema.folders)
        self._description_vectors: dict[str, np.ndarray] = {}

    @classmethod
    def from_settings(
        cls,
        schema: Schema,
        settings: Settings,
        embed: Embed | None = None,
        budget: TokenBudget | None = None,
    ) -> Router:
        """A router over the configured stages (few retries: routing must stay quick).

        The model stage has a deadline below the MCP request timeout (routing runs inside
        ``kb_route`` and ``kb_query``), and is left out for a model of the small profile.
        """
        from memserver.clients.laya import LayaClient
        from memserver.clients.llm import LLMClient
        from memserver.clients.profile import profile_for, server_call_deadline

        llm = None
        if settings.llm is not None and profile_for(settings.llm).route_by_model:
            deadline = server_call_deadline(settings)
            llm = LLMClient(settings.llm, budget, max_attempts=2, deadline=deadline)
        laya = LayaClient(settings.laya) if settings.laya else None
        threshold = settings.laya.options.get("threshold", 0.5) if settings.laya else 0.5
        return cls(schema, llm, laya, embed, threshold if threshold is not None else 0.5)

    def close(self) -> None:
        if self.llm is not None:
            self.llm.close()
        if self.laya is not None:
            self.laya.close()

    def route(self, text: str, folders: Sequence[str] | None = None) -> RouteResult:
        """The folders ``text`` belongs to, among ``folders`` (default: all)."""
        specs = (
            [self.schema.folder(name) for name in folders]
            if folders is not None
            else list(self.schema.folders)
        )
        if not specs or not text.strip():
            return RouteResult((), "none")
        degraded: list[str] = []
        if self.laya is not None:
            try:
                return self._select(self.laya.folder_scores(text, specs), specs, "laya", degraded)
            except Exception as exc:  # any failure of a stage falls through to the next
                log.warning("routing: laya stage failed, falling back: %s", exc)
                degraded.append("laya_unavailable")
        if self.llm is not None:
            try:
                return self._select(self._llm_scores(text, specs), specs, "llm", degraded)
            except BudgetExceeded as exc:
                log.warning("routing: %s", exc)
                degraded.append("llm_budget_exceeded")
            except Exception as exc:
                log.warning("routing: llm stage failed, falling back: %s", exc)
                degraded.append("llm_timeout" if isinstance(exc, LLMTimeout) else "llm_unavailable")
        scores = self._lexical_scores(text, specs, degraded)
        result = self._select(scores, specs, "lexical", degraded)
        best = result.scores[0] if result.scores else None
        if not result.folders and best is not None and best.score > 0:
            return RouteResult((best,), "lexical", result.degraded, result.scores)
        return result

    # -- stages

    def _llm_scores(self, text: str, specs: Sequence[FolderSpec]) -> dict[str, float]:
        assert self.llm is not None
        listing = "\n".join(f"- {spec.name}: {_describe(spec)}" for spec in specs)
        messages = [
            {
                "role": "system",
                "content": (
                    "You route texts to the folders of a company knowledge base. For each "
                    "folder, give the probability (0 to 1) that the text contains something "
                    "that belongs in it. A text can belong to several folders, or to none. "
                    'Answer with one JSON object: {"folders": {"<folder name>": <probability>}} '
                    "listing every folder."
                ),
            },
            {
                "role": "user",
                "content": f"Folders:\n{listing}\n\nText:\n<<<\n{text[:LLM_TEXT_CHARS]}\n>>>",
            },
        ]
        answer = self.llm.chat_json(messages)
        scores = _scores_from_answer(answer, [spec.name for spec in specs])
        if not scores:
            raise LLMError(f"llm: the routing answer named no known folder: {str(answer)[:200]}")
        return scores

    def _lexical_scores(
        self, text: str, specs: Sequence[FolderSpec], degraded: list[str]
    ) -> dict[str, float]:
        stems = set(_stems(text))
        scores = {spec.name: _keyword_score(stems, self._keywords[spec.name]) for spec in specs}
        if self.embed is None:
            return scores
        try:
            similarity = self._similarities(text, specs)
        except Exception as exc:
            log.warning("routing: embedding failed, keyword overlap only: %s", exc)
            degraded.append("embedding_unavailable")
            return scores
        return {
            name: _KEYWORD_SHARE * scores[name] + (1 - _KEYWORD_SHARE) * similarity[name]
            for name in scores
        }

    def _similarities(self, text: str, specs: Sequence[FolderSpec]) -> dict[str, float]:
        """How close each folder's description is to the text, relative to the closest.

        Sentence embeddings put every folder description at a similar cosine (e5: all
        within ~0.05), so the absolute value says little; the distance from the best
        folder, over a ``_COSINE_WINDOW``, is the signal (1 = closest, 0 = far behind),
        weighed by the best cosine itself.
        """
        assert self.embed is not None
        missing = [spec for spec in specs if spec.name not in self._description_vectors]
        if missing:
            vectors = self.embed([f"{spec.name}: {_describe(spec)}" for spec in missing])
            for spec, vector in zip(missing, vectors, strict=True):
                self._description_vectors[spec.name] = _unit(vector)
        query = _unit(self.embed([text[:EMBED_CHARS]])[0])
        cosines = {
            spec.name: float(np.dot(query, self._description_vectors[spec.name])) for spec in specs
        }
        top = max(cosines.values())
        if top <= 0:
            return dict.fromkeys(cosines, 0.0)
        # Scaled by the best cosine: a weak best match (hash vectors) earns little trust.
        trust = min(1.0, top)
        return {
            name: trust * max(0.0, 1.0 - (top - cos) / _COSINE_WINDOW)
            for name, cos in cosines.items()
        }

    def _select(
        self,
        scores: Mapping[str, float],
        specs: Sequence[FolderSpec],
        stage: str,
        degraded: list[str],
    ) -> RouteResult:
        ranked = sorted(
            (FolderScore(spec.name, round(scores.get(spec.name, 0.0), 4)) for spec in specs),
            key=lambda item: (-item.score, item.folder),
        )
        chosen = tuple(item for item in ranked if item.score >= self.threshold)
        return RouteResult(chosen, stage, tuple(degraded), tuple(ranked))


def _describe(spec: FolderSpec) -> str:
    description = " ".join(spec.description.split()) or spec.name
    fields = ", ".join(spec.field_names)
    return f"{description} (fields: {fields})" if fields else description


def _scores_from_answer(answer: Mapping[str, Any], names: Sequence[str]) -> dict[str, float]:
    """Folder -> score from the shapes models produce: {"folders": {...}}, a flat
    mapping, or a list of {"folder"/"name", "score"/"probability"} items."""
    raw: Any = answer.get("folders", answer.get("scores", answer))
    pairs: list[tuple[Any, Any]] = []
    if isinstance(raw, Mapping):
        pairs = list(raw.items())
    elif isinstance(raw, list):
        for item in raw:
            if isinstance(item, Mapping):
                name = item.get("folder", item.get("name"))
                pairs.append((name, item.get("score", item.get("probability"))))
            elif isinstance(item, str):
                pairs.append((item, 1.0))
    by_lower = {name.lower(): name for name in names}
    scores: dict[str, float] = {}
    for key, value in pairs:
        name = by_lower.get(str(key).strip().lower())
        if isinstance(value, Mapping):
            value = value.get("score", value.get("probability"))
        number = _to_float(value)
        if name is not None and number is not None:
            scores[name] = min(1.0, max(0.0, number))
    return scores


def _to_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _stem(word: str) -> str:
    # Crude but language-neutral: a 6-letter prefix folds English plurals and tenses
    # ("meetings"/"meeting") and Mongolian suffixes ("уулзалтын"/"уулзалт").
    if len(word) > 6:
        return word[:6]
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _stems(text: str) -> list[str]:
    words = (w.lower() for w in _WORD.findall(text))
    return [_stem(w) for w in words if len(w) >= 3 and not w.isdigit() and w not in _STOPWORDS]


def _folder_keywords(folders: Sequence[FolderSpec]) -> dict[str, dict[str, float]]:
    """Per folder: stem -> weight, rarer stems (across folders) weighing more."""
    raw: dict[str, dict[str, float]] = {}
    for spec in folders:
        weights: dict[str, float] = {}
        sources = (
            (f"{spec.name} {spec.type}", _NAME_WEIGHT),
            (" ".join(name.replace("_", " ") for name in spec.field_names), _FIELD_WEIGHT),
            (spec.description, _DESCRIPTION_WEIGHT),
        )
        for text, weight in sources:
            for stem in _stems(text):
                weights[stem] = max(weights.get(stem, 0.0), weight)
        raw[spec.name] = weights
    spread = Counter(stem for weights in raw.values() for stem in weights)
    return {
        name: {stem: weight / spread[stem] for stem, weight in weights.items()}
        for name, weights in raw.items()
    }


def _keyword_score(stems: set[str], keywords: Mapping[str, float]) -> float:
    total = sum(weight for stem, weight in keywords.items() if stem in stems)
    return 1.0 - math.exp(-total)


def _unit(vector: Any) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array
