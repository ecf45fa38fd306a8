"""Every weight and threshold of the search, one frozen settings object per area.

* :data:`ARMS`: how many candidates each arm returns and how it scans, and how much each
  arm counts in the fusion by the kind of question (read by
  :func:`memserver.search.weights.arm_weights`);
* :data:`FUSION`: reciprocal rank fusion, the small priors after it, the window, autocut,
  the budgets of pages and notes, and the guarantee that the fused results keep each
  arm's best (:mod:`memserver.search.fusion`, :mod:`memserver.search.kinds`);
* :data:`SOURCES`: the raw source arms (:mod:`memserver.search.source_arms`,
  :mod:`memserver.search.source_notes`);
* :data:`PARTS`: a long question searched part by part (:mod:`memserver.search.parts`).

The brief's settings are :data:`memserver.server.brief_settings.BRIEF`, the name
resolver's :data:`memserver.graph.resolve.RESOLVE`.

Each value is the same for all data, or a rule that reads the knowledge base's own
statistics (a word's rarity among the notes, the notes' mean length): nothing here is
chosen per dataset or per benchmark (``bench/README.md``). Why each value is what it is
is said beside it, with the measurement that set it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


def _frozen(values: dict[str, float]) -> Mapping[str, float]:
    return MappingProxyType(values)


@dataclass(frozen=True)
class ArmSettings:
    """The retrieval arms: candidates, scans, and each arm's weight in the fusion."""

    pool: int = 50  # candidates per arm (gbrain: >= 50)
    # Chunks ranked per keyword stage at most. A word on tens of thousands of chunks (a
    # common surname at 100,000 pages) would otherwise cost one heap read per chunk;
    # past this many matches the ranking is among the first match_cap found.
    match_cap: int = 2000
    short_window_days: int = 8  # windows up to this long use an exact vector scan
    scan_tuples: int = 40_000  # HNSW iterative scan bound
    # The page vector arm's HNSW search width. With e5 vectors
    # (bench/bench_vector_recall.py) a width of 100 returned 99.4% of the exact nearest
    # 10 pages at 2,000 pages but 98.0% at 5,000 (worst question 60%), where 200 returns
    # 99.6% (worst 90%) for about 1 ms more: recall falls as the graph grows.
    page_ef_search: int = 200
    window_scan_tuples: int = 8_000
    fuzzy_max_words: int = 4  # a longer question is not a misspelt name
    fuzzy_min: float = 0.35
    max_entities: int = 3  # names a question's graph paths start from
    # The weight of each arm's ranks in the fusion (fusion.fuse: RRF's k becomes k / w).
    weights: Mapping[str, float] = field(
        default_factory=lambda: _frozen(
            {
                "keyword": 1.0,
                "vector": 1.0,
                "title": 1.2,
                "timeline": 1.0,
                "dated": 0.6,
                "graph": 1.5,
                "graph_augment": 0.3,
                "source_keyword": 1.0,
                "source_vector": 1.0,
                "source_note": 2.0,
            }
        )
    )
    expansion_weight: float = 0.5  # an LLM rewrite of the question (tokenmax)
    partial_keyword: float = 0.6  # no chunk holds every word of a long question
    identifier_keyword: float = 2.0  # a question naming an identifier: the keyword arms
    entity_title: float = 2.0  # a short question that is mostly a name: the title arm
    relational_graph: float = 2.5  # "who reports to X": the graph arm
    # A sentence with no name in it: meaning matters more than shared words.
    concept_vector: float = 1.4
    concept_keyword: float = 0.8
    window_timeline: float = 1.5  # a question with a window: its dated arms
    window_dated: float = 1.0
    # The question names a word only one or two notes hold (a ticket, a figure, a place):
    # those notes answer it, and among notes alike in every other word the nearest in
    # meaning add nothing but noise (measured: eval_search).
    rare_source_keyword: float = 2.0


@dataclass(frozen=True)
class FusionSettings:
    """Fusing the arms, shaping the fused list and cutting it to the response."""

    rrf_k: float = 60.0
    rrf_share: float = 0.7  # the rest is the vector arm's rescaled cosine
    boost_min: float = 0.5  # a folder's source_boost is clamped to these
    boost_max: float = 1.5
    named_boost: float = 1.15  # a folder the question names
    high_vector: float = 0.85  # e5 cosines are compressed high: 0.85+ is a close paraphrase
    weak_vector: float = 0.80
    autocut_drop: float = 0.2  # cut where the score falls by this share of the top score
    autocut_keep: int = 3  # ... keeping at least this many
    entry_only: float = 0.85  # a page inside a window only through a timeline entry
    # Results filled from outside a window: one dated next to it scores up to
    # near_window more than one far from it, halving near_window_days after the window
    # ends (or before it starts). A note tells a few days after what happened.
    near_window: float = 0.1
    near_window_days: int = 7
    chars_per_token: int = 4
    # Page results and source notes each have a budget of their own (kinds.quotas): the
    # notes' share of the result count and of the token budget when both kinds are
    # there; what one kind leaves unused goes to the other. Neither kind can crowd the
    # other out (issue 42: 10 of 73 company questions got no note at all).
    note_share: float = 0.5
    # The fused results of a kind keep the first arm_reserve results of each arm that
    # searched it (kinds.keep_arms_best), whatever the fusion made of them: the hybrid
    # never loses what one arm alone finds first.
    arm_reserve: int = 2
    page_guard_arms: tuple[str, ...] = ("keyword", "vector")
    note_guard_arms: tuple[str, ...] = ("source_keyword", "source_note", "source_vector")


@dataclass(frozen=True)
class SourceSettings:
    """The raw source arms: sentences (keyword, vector) and whole notes (BM25)."""

    # A name at most rare_df source chunks hold picks its notes (a ticket id, a figure,
    # a place): source_keyword marks the files holding one "rare_term". Only names: in
    # sentence-sized chunks many ordinary words are that rare too.
    rare_df: int = 3
    rare_min_chunks: int = 30  # in fewer source chunks than this, rarity says nothing
    # The vector arm reads this many nearest sentences per file it returns: one note's
    # sentences on its subject sit close together, and the pool is also where a
    # sentence's hubness is measured. 6 per file (300 sentences): recall@5 0.95 / 0.95 /
    # 0.93 on three draws of bench/eval_search.py's notes; 10: 0.98 / 0.95 / 0.93.
    sentences_per_file: int = 10
    # Notes built from the same phrases put many sentences at nearly the same place,
    # where an HNSW scan with pgvector's default width misses some of the nearest: at 40
    # the nearest 10 of 8,247 sentences were 93% found, at 400 99.8%.
    ef_search: int = 400
    # A sentence's cosine is lowered by hub_weight x its mean cosine to its
    # hub_neighbours most similar sentences of the pool (CSLS within the pool): recall@5
    # 0.74 -> 0.88 vector-only on bench/eval_search.py's sources, the same from 0.2 to
    # 0.4 and for 5 to 20 neighbours.
    hub_neighbours: int = 10
    hub_weight: float = 0.25
    # BM25 over whole notes (source_notes.note_keyword).
    k1: float = 1.2
    b: float = 0.75
    # The note arm's votes are scaled by the largest part of the question's rarity one
    # note holds, to this power: a question put in other words than the notes' leaves
    # the arm little to say (bench/eval_sources.py's paraphrases: 0.98 -> 0.88 unscaled).
    # A word no note holds counts at the largest rarity, unless the question's vector
    # says it does without the word (source_notes._incidental, no threshold of its own):
    # then no rarer than the question's rarest word the notes hold.
    gate_power: int = 3
    # The question's vectors that test go at most this far (the question, and it without
    # each of its words and stop words): a longer question keeps every rarity (a bound
    # on the embedder's work for one question, whatever its length).
    incidental_vectors: int = 24
    mention_min_days: int = 7  # a mention up to a week long counts inside any window


@dataclass(frozen=True)
class PartSettings:
    """A long question asked as its parts (:mod:`memserver.search.parts`)."""

    max_parts: int = 4  # a question is read as at most this many parts
    # A part is searched on its own words when it holds at least this many topical
    # words of its own; a shorter part ("when did it change") borrows the question's
    # subject, the topical words of its first part.
    own_topic_words: int = 2
    # The whole question's ranks count this much in the merge, each part's 1.0.
    whole_weight: float = 1.0


ARMS = ArmSettings()
FUSION = FusionSettings()
SOURCES = SourceSettings()
PARTS = PartSettings()
