"""Time-aware hybrid search: time parsing (English, Mongolian), the question's intent, the
retrieval arms over pages and raw sources, fusion and weights, the model steps (rewrites,
rerank), timelines and the pipeline. Imports routing, graph, db, kb and clients."""
