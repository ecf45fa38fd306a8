"""Benchmarks and evaluations of the memory system, run from the repository root.

Every module with a command line runs as ``python -m bench.NAME`` (``--help`` lists its
options); ``make bench`` runs the quick set. The figures recorded so far, with the
command behind each, are in ``bench/RESULTS.md``. Nothing in ``memserver``, the agents or
``tests`` imports this package; it imports them.

Benchmarks (cost: time, memory, throughput):

- ``bench_console``: p50/p95 of every web console view at 10,000 generated pages.
- ``bench_embed_lanes``: how long a query embedding waits while passages are embedded.
- ``bench_hostile``: hostile input against a live memory server and read agent.
- ``bench_ingest``: ingest cost per source, example_kb through the ingest agent.
- ``bench_keyword_overhead``: keyword-only search against the raw full-text query.
- ``bench_mcp_overhead``: what the MCP layer costs against floors measured in the same run.
- ``bench_read_agent``: the read agent's own overhead and tool calls per question.
- ``bench_reindex``: reindex throughput and peak memory on generated knowledge bases.
- ``bench_search_latency``: p50/p95 of ``kb_query`` per mode at 10,000 and 100,000 pages.
- ``bench_startup``: page parsing, CLI start, HTTP client latency.
- ``bench_up``: ``memserver up`` from a fresh copy of example_kb, banner to every note
  ingested, and questions asked during the ingest.
- ``bench_vector_recall``: how many of the exact nearest chunks the HNSW scan finds.
- ``load_mcp``: concurrent MCP clients calling ``kb_get_page`` and ``kb_list_pages``.
- ``profile_mcp``: where the memory server's CPU goes under MCP load.

Evaluations (quality: hits, recall, correct answers):

- ``eval_search``: hit@1, hit@3 and MRR per question category, hybrid against single arms.
- ``eval_answers``: answers without a model to the 30 questions of example_kb/EXPECTED.md.
- ``eval_real_model``: both agents with a real model on example_kb.
- ``eval_locomo``: session recall on LoCoMo's development half, through ``kb_query``.
- ``eval_locomo_answers``: whole answers on LoCoMo's development half, through the read agent.
- ``eval_orgmem``: a company memory (OrgMemBench's Helix Logistics): evidence found and the
  gold answers' key facts stated, per question category, beside BM25 and vector-only.

Shared pieces (no command line unless said):

- ``common``: ports, readiness, percentiles, processes, tokens, a scripted LLM.
- ``gen_kb``: a deterministic generated knowledge base of N pages (also a command).
- ``eval_sources``: the long, similar, dated conversation notes of ``eval_search``.
- ``expected_pages``: the extraction of example_kb checked against EXPECTED.md.
- ``eval_questions.yaml``: the questions of ``eval_search``.
- ``orgmem_scoring``: ``eval_orgmem``'s key facts of a gold answer, hit@k and cover@k.
- ``orgmem_schema.yaml``: the company schema ``eval_orgmem`` ingests with.
"""
