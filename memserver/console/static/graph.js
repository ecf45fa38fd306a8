// The graph view: the embedded neighbourhood (#graph-data) laid out by d3-force into SVG.
// Verb checkboxes hide and show edge types; drag a node to move it; click to open it.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const COLOURS = ["#2f5bd3", "#1f7a3a", "#b3261e", "#8a5a00", "#6b3fa0", "#00707a", "#a0306b", "#4d5566"];

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
  const lines = edges.map(() => svg.appendChild(element("line")));
  const labels = edges.map((e) => {
    const text = svg.appendChild(element("text", { class: "edge", "text-anchor": "middle" }));
    text.textContent = e.verb;
    return text;
  });
  const groups = nodes.map((n) => {
    const group = svg.appendChild(element("g", { class: "node" + (n.id === data.center ? " center" : ""), "data-id": n.id }));
    const circle = group.appendChild(element("circle", { r: n.id === data.center ? 11 : 8 }));
    circle.setAttribute("fill", COLOURS[folders.indexOf(n.folder) % COLOURS.length]);
    const title = group.appendChild(element("title"));
    title.textContent = `${n.title} [${n.id}]`;
    const text = group.appendChild(element("text", { x: 12, y: 4 }));
    text.textContent = n.title;
    return group;
  });
  const simulation = d3.forceSimulation(nodes)
    .force("link", d3.forceLink(edges).id((n) => n.id).distance(90))
    .force("charge", d3.forceManyBody().strength(-260))
    .force("center", d3.forceCenter(width / 2, height / 2))
    .force("collide", d3.forceCollide(24));
  simulation.on("tick", () => {
    for (const n of nodes) {
      n.x = Math.max(14, Math.min(width - 14, n.x));
      n.y = Math.max(14, Math.min(height - 14, n.y));
    }
    edges.forEach((e, i) => {
      lines[i].setAttribute("x1", e.source.x); lines[i].setAttribute("y1", e.source.y);
      lines[i].setAttribute("x2", e.target.x); lines[i].setAttribute("y2", e.target.y);
      labels[i].setAttribute("x", (e.source.x + e.target.x) / 2);
      labels[i].setAttribute("y", (e.source.y + e.target.y) / 2);
    });
    nodes.forEach((n, i) => groups[i].setAttribute("transform", `translate(${n.x},${n.y})`));
  });
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
