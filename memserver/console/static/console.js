// Small progressive parts of the console; every page works without them.
"use strict";

// Ingest view: the ledger's counts follow the server-sent events of /ui/ingest/events.
function followLedger(section) {
  const live = document.getElementById("live");
  const source = new EventSource(section.dataset.events);
  source.addEventListener("ledger", (event) => {
    const data = JSON.parse(event.data);
    for (const [status, n] of Object.entries(data.counts)) {
      const cell = section.querySelector(`[data-count="${status}"]`);
      if (cell) cell.textContent = String(n);
    }
    document.getElementById("done").textContent = String(data.done);
    document.getElementById("total").textContent = String(data.total);
    const bar = document.getElementById("progress-bar");
    bar.max = Math.max(1, data.total);
    bar.value = data.done;
    const recent = document.getElementById("recent");
    recent.replaceChildren(...data.recent.map((entry) => {
      const item = document.createElement("li");
      const path = document.createElement("code");
      path.textContent = entry.path;
      item.append(path, ` ${entry.status} ${entry.updated_at.replace("T", " ").slice(0, 16)}`);
      return item;
    }));
    live.textContent = "live, updated " + new Date().toLocaleTimeString();
  });
  source.addEventListener("embedding", (event) => {
    const data = JSON.parse(event.data);
    const bar = document.getElementById("embedding-bar");
    bar.max = Math.max(1, data.total);
    bar.value = data.done;
    document.getElementById("embedding-line").textContent = data.line;
    document.getElementById("embedding").hidden = false;
  });
  source.addEventListener("signed-out", () => { source.close(); window.location.reload(); });
  source.onerror = () => { live.textContent = "reconnecting ..."; };
  window.addEventListener("pagehide", () => source.close());
}

document.addEventListener("DOMContentLoaded", () => {
  const ledger = document.getElementById("ledger");
  if (ledger && window.EventSource) followLedger(ledger);
});
