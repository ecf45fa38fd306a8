// The graph view: the embedded neighbourhood (#graph-data) laid out by d3-force into SVG.
// Verb checkboxes hide and show edge types (each verb its colour, each folder its node
// colour); drag a node to move it; click to open it.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function element(name, attributes) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  return node;
}

function draw(svg, data, verbs) {
  svg.replaceChildren();
  const width = svg.clientWidth || 960;
  const height = svg.clientHeight || 600;
  const folders = [...new Set(data.nodes.map((n) => n.folder))];
  const edges = data.edges.filter((e) => verbs.has(e.verb)).map((e) => ({ ...e }));
  const keep = new Set([data.center]);
  for (const e of edges) { keep.add(e.source); keep.add(e.target); }
  const nodes = data.nodes.filter((n) => keep.has(n.id)).map((n) => ({ ...n }));
  const lines = edges.map((e) => {
    const line = svg.appendChild(element("line", { class: `verb-${data.verbs.indexOf(e.verb) % 8}` }));
    const title = line.appendChild(element("title"));
    title.textContent = `${e.source} —${e.verb}→ ${e.target}`;
    return line;
  });
  const groups = nodes.map((n) => {
    const group = svg.appendChild(element("g", { class: "node" + (n.id === data.center ? " center" : ""), "data-id": n.id }));
    group.appendChild(element("circle", { r: n.id === data.center ? 11 : 8, class: `folder-${folders.indexOf(n.folder) % 8}` }));
    const title = group.appendChild(element("title"));
    title.textContent = `${n.title} [${n.id}]`;
    const text = group.appendChild(element("text", { x: 12, y: 4 }));
    text.textContent = n.title;
    return group;
  });
  const simulation = d3.forceSimulation(nodes)
    .force("link", d3.forceLink(edges).id((n) => n.id).distance(140))
    .force("charge", d3.forceManyBody().strength(-900))
    .force("x", d3.forceX(width / 2).strength(0.04))
    .force("y", d3.forceY(height / 2).strength(0.12))
    .force("collide", d3.forceCollide(34))
    .stop();
  // Laid out at once (a static layout, d3's ~300 ticks to alpha_min), then drawn; the
  // simulation only runs again while a page is dragged.
  simulation.tick(Math.ceil(Math.log(simulation.alphaMin()) / Math.log(1 - simulation.alphaDecay())));
  const place = () => {
    for (const n of nodes) {
      n.x = Math.max(14, Math.min(width - 14, n.x));
      n.y = Math.max(14, Math.min(height - 14, n.y));
    }
    edges.forEach((e, i) => {
      lines[i].setAttribute("x1", e.source.x); lines[i].setAttribute("y1", e.source.y);
      lines[i].setAttribute("x2", e.target.x); lines[i].setAttribute("y2", e.target.y);
    });
    nodes.forEach((n, i) => groups[i].setAttribute("transform", `translate(${n.x},${n.y})`));
  };
  place();
  simulation.on("tick", place);
  groups.forEach((group, i) => draggable(svg, group, nodes[i], simulation));
  svg.dataset.nodes = String(nodes.length);
  return simulation;
}

function draggable(svg, group, node, simulation) {
  let moved = false;
  group.addEventListener("pointerdown", (event) => {
    moved = false;
    group.setPointerCapture(event.pointerId);
    simulation.alphaTarget(0.3).restart();
  });
  group.addEventListener("pointermove", (event) => {
    if (!group.hasPointerCapture(event.pointerId)) return;
    const box = svg.getBoundingClientRect();
    node.fx = event.clientX - box.left;
    node.fy = event.clientY - box.top;
    moved = true;
  });
  group.addEventListener("pointerup", (event) => {
    group.releasePointerCapture(event.pointerId);
    simulation.alphaTarget(0);
    if (!moved) window.location.href = node.href;
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const svg = document.getElementById("graph");
  const source = document.getElementById("graph-data");
  if (!svg || !source || !window.d3) return;
  const data = JSON.parse(source.textContent);
  const boxes = [...document.querySelectorAll(".verb-filter")];
  const chosen = () => new Set(boxes.filter((b) => b.checked).map((b) => b.value));
  let simulation = draw(svg, data, chosen());
  for (const box of boxes) {
    box.addEventListener("change", () => { simulation.stop(); simulation = draw(svg, data, chosen()); });
  }
});
