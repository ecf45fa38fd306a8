"""The model's part of ingestion: what it is asked (extract, fill, merge sections, repair)
and every answer checked, against the schema and against the note, before it is used;
``review`` holds back what a note cannot justify.
Imports ``ingest_agent.records``, ``names``, ``errors``, ``extract`` (reading the note),
``pages`` (the merge order) and memserver's low floors; never the agent or the CLI."""
