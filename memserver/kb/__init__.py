"""The knowledge base on disk: schema.yaml, pages (model, render, parse, rules), chunks,
frontmatter, paths and safe names, the manifest ledger and redaction. Pure values and files:
imports only ``memserver.errors``; every other package may import it."""
