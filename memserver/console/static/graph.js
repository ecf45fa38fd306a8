// The graph view: the embedded neighbourhood (#graph-data) laid out by d3-force into SVG.
// Verb checkboxes hide and show edge types; each verb and each folder has the fixed
// colour the server gave it (the legend above the drawing); drag a node to move it;
// click to open it. Labels are placed so that they do not cover each other: each tries
// a few spots around its node and is hidden (its title stays) when none is free.
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
  const edges = data.edges.filter((e) => verbs.has(e.verb)).map((e) => ({ ...e }));
  const keep = new Set([data.center]);
  for (const e of edges) { keep.add(e.source); keep.add(e.target); }
  const nodes = data.nodes.filter((n) => keep.has(n.id)).map((n) => ({ ...n }));
  const lines = edges.map((e) => {
    const line = svg.appendChild(element("line", { stroke: e.colour, "data-verb": e.verb }));
    const title = line.appendChild(element("title"));
    title.textContent = `${e.source} —${e.verb}→ ${e.target}`;
    return line;
  });
  const groups = nodes.map((n) => {
    const group = svg.appendChild(element("g", { class: "node" + (n.id === data.center ? " center" : ""), "data-id": n.id }));
    group.appendChild(element("circle", { r: n.id === data.center ? 11 : 8, fill: n.colour }));
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
    placeLabels(nodes, groups.map((g) => g.querySelector("text")));
  };
  place();
  simulation.on("tick", place);
  groups.forEach((group, i) => draggable(svg, group, nodes[i], simulation));
  svg.dataset.nodes = String(nodes.length);
  return simulation;
}

// Spots for a label around its node (x of its left end, y of its baseline), in order.
function spots(width) {
  const out = [[12, 4], [-12 - width, 4], [-width / 2, -14], [-width / 2, 24]];
  for (let k = 1; k <= 4; k++) {
    for (const dy of [16 * k, -16 * k]) out.push([12, 4 + dy], [-12 - width, 4 + dy]);
  }
  return out;
}

function overlaps(a, b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

function placeLabels(nodes, texts) {
  const taken = [];
  const order = nodes.map((n, i) => i).sort((i, j) => nodes[i].depth - nodes[j].depth);
  for (const i of order) {
    const n = nodes[i], text = texts[i];
    const width = text.getComputedTextLength();
    const free = spots(width)
      .map(([dx, dy]) => ({ dx, dy, box: { x: n.x + dx - 1, y: n.y + dy - 12, w: width + 2, h: 16 } }))
      .find((spot) => !taken.some((box) => overlaps(spot.box, box)));
    text.classList.toggle("hidden-label", !free);
    if (!free) continue;
    text.setAttribute("x", free.dx);
    text.setAttribute("y", free.dy);
    taken.push(free.box);
  }
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
