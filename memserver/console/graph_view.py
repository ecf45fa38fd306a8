"""The graph view's data: a page's neighbourhood, with a fixed colour per verb and folder.

Colours come from the schema's order (its folders; the verbs of its link fields and
link patterns), not from what a drawing happens to hold, so ``attended`` is the same
colour at depth 1 and 2 and on every page. A verb the schema does not name (a body link)
comes after, in name order. Colours are attributes of the SVG (the page's content
security policy allows no inline styles).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memserver.console.web import url
from memserver.kb.schema_model import Schema

# Twelve colours told apart on white (Tableau's 10 and two more); beyond them, hues a
# golden angle apart.
PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#6b6ecf", "#17becf", "#8c8c8c",
)  # fmt: skip


def colour(index: int) -> str:
    if index < len(PALETTE):
        return PALETTE[index]
    return f"hsl({(index * 137.508) % 360:.0f}, 55%, 45%)"


def schema_verbs(schema: Schema) -> list[str]:
    """Every verb the schema names, in its order."""
    verbs: dict[str, None] = {}
    for folder in schema.folders:
        for spec in folder.fields:
            if spec.verb:
                verbs.setdefault(spec.verb)
        for link in folder.link_verbs:
            verbs.setdefault(link.verb)
    return list(verbs)


def palette(names: Sequence[str], extra: Sequence[str]) -> dict[str, str]:
    """A colour for each of ``names`` (fixed order), then for ``extra`` not among them."""
    ordered = list(names) + sorted(set(extra) - set(names))
    return {name: colour(i) for i, name in enumerate(ordered)}


def graph_data(schema: Schema, page_id: str, found: dict[str, Any]) -> dict[str, Any]:
    """``kb_neighbors``'s answer as nodes and edges for static/graph.js, with colours."""
    nodes: dict[str, dict[str, Any]] = {page_id: {"id": page_id, "title": page_id, "depth": 0}}
    for edge in found["edges"]:
        for end, title in (
            (edge["from_id"], edge["from_title"]),
            (edge["to_id"], edge["to_title"]),
        ):
            node = nodes.setdefault(end, {"id": end, "title": title, "depth": edge["depth"]})
            node["title"] = title
    folder_colours = palette(schema.folder_names, [n.partition("/")[0] for n in nodes])
    verbs = sorted({e["verb"] for e in found["edges"]})
    verb_colours = palette(schema_verbs(schema), verbs)
    for node in nodes.values():
        node["folder"] = node["id"].partition("/")[0]
        node["colour"] = folder_colours[node["folder"]]
        node["href"] = url(f"page/{node['id']}")
    shown_folders = sorted({n["folder"] for n in nodes.values()}, key=list(folder_colours).index)
    return {
        "center": page_id,
        "nodes": list(nodes.values()),
        "edges": [
            {
                "source": e["from_id"],
                "target": e["to_id"],
                "verb": e["verb"],
                "depth": e["depth"],
                "colour": verb_colours[e["verb"]],
            }
            for e in found["edges"]
        ],
        "verbs": [(v, verb_colours[v]) for v in verbs],
        "folders": [(f, folder_colours[f]) for f in shown_folders],
        "truncated": found["truncated"],
    }
