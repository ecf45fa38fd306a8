"""Which fields say whether a page still holds: a decision's status and its supersede links.

Read from the schema, never from a folder's name: the *lifecycle field* is the enum with
``reversed`` or ``superseded`` among its values; its *draft value* is ``proposed`` or
``draft`` when it has one; a *supersede field* is a link into the page's own folder whose
verb (or name) is ``supersedes``, ``reverses``, ``replaces`` or ``superseded_by``. The
ingest agent reads decisions with them, and the server's write gate
(``memserver.server.trust_gate``) knows a reversal when it sees one.
"""

from __future__ import annotations

from memserver.kb.schema_model import FieldSpec, FolderSpec

SUPERSEDE_VERBS = frozenset({"supersedes", "reverses", "replaces", "superseded_by"})
REVERSAL_VALUES = frozenset({"reversed", "superseded"})
DRAFT_VALUES = ("proposed", "draft")


def supersede_fields(folder: FolderSpec) -> list[FieldSpec]:
    """Link fields from a page to another page of its own folder that supersede it."""
    return [
        f
        for f in folder.fields
        if f.is_link and f.folder == folder.name and (f.verb or f.name) in SUPERSEDE_VERBS
    ]


def lifecycle_field(folder: FolderSpec) -> FieldSpec | None:
    """The enum field that says whether a page still holds (``reversed``, ``superseded``)."""
    for spec in folder.fields:
        if spec.type == "enum" and REVERSAL_VALUES & set(spec.values):
            return spec
    return None


def draft_value(spec: FieldSpec | None) -> str | None:
    """The lifecycle field's value for a page nobody accepted yet (None: it has none)."""
    if spec is None:
        return None
    return next((v for v in DRAFT_VALUES if v in spec.values), None)
