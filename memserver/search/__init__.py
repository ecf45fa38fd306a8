"""Time-aware hybrid search: the question's intent (its dates read by ``timeparse``), the
retrieval arms over pages and raw sources, fusion and weights, the model steps (rewrites,
rerank), timelines and the pipeline. Imports routing, graph, db, timeparse, kb and clients."""
