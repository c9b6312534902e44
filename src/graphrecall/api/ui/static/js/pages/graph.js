// The graph view: a subgraph around the highest-degree nodes drawn with cytoscape, the
// same nodes and facts listed as text beside it, and a panel for the clicked node.

import cytoscape from "../../vendor/cytoscape/cytoscape.esm.min.mjs";
import { zep } from "../api.js";
import { factItem, graphHeader, loadGraph, validAt, isInvalidated } from "../common.js";
import { errorBox, fill, fmtDate, h, kv, link } from "../dom.js";
import { setQuery } from "../main.js";

// A big graph is never loaded whole: the top nodes by degree (25, or ?seeds=N) seed a
// one-hop subgraph.
const DEFAULT_SEEDS = 25;
const MAX_NODES = 150;
const MAX_EDGES = 400;
const PALETTE = ["#3358d4", "#e8590c", "#2f9e44", "#ae3ec9", "#0c8599", "#d6336c", "#f59f00", "#5c7cfa", "#868e96", "#94d82d"];

export const nodeType = (n) => (n.labels || []).find((l) => l !== "Entity") || "Entity";

// Colours are handed out in order of first sight, so no two of a page's first ten types
// share one.
const colours = new Map([["Entity", "#667085"]]);
function colorOf(type) {
  if (!colours.has(type)) colours.set(type, PALETTE[(colours.size - 1) % PALETTE.length]);
  return colours.get(type);
}

export async function graphPage(view, [id], query, nav) {
  const graph = await loadGraph(id);
  const gid = graph.uuid;
  const SEEDS = Math.min(100, Math.max(1, Number(query.get("seeds")) || DEFAULT_SEEDS));
  const nodes = new Map();
  const edges = new Map();
  let asOf = query.get("asof") ? new Date(query.get("asof")) : null;
  let selected = query.get("node") || null;
  let detailsRun = 0;

  const status = h("p", { class: "muted", id: "graph-status" });
  const asOfInput = h("input", { type: "date", name: "asof", value: query.get("asof") || "" });
  const cyEl = h("div", { id: "cy", role: "img", "aria-label": "Graph drawing (listed as text below)" });
  const legend = h("div", { class: "legend" });
  const details = h("aside", { class: "side card", id: "details" },
    h("p", { class: "muted" }, "Click a node to see its summary, facts and episodes."));
  const text = h("section", { class: "graph-text card", id: "graph-text", "aria-label": "The drawn graph as text" });
  view.append(
    graphHeader(graph, id, "graph"),
    h("form", { class: "inline", onsubmit: (e) => e.preventDefault() },
      h("label", {}, "As of (hides facts not valid then)", asOfInput),
      h("button", { type: "button", class: "secondary", onclick: () => { asOfInput.value = ""; applyAsOf(); } }, "Show all times"),
      h("button", { type: "button", class: "secondary", onclick: () => relayout() }, "Re-layout")),
    status,
    h("div", { class: "graph-layout" }, h("div", {}, cyEl, legend), details),
    text,
  );

  const top = await zep("POST", `/graphs/${gid}/nodes/list`, {
    body: {}, query: { page_size: SEEDS, order_by: "degree", order: "desc" },
  });
  for (const n of top.items) nodes.set(n.uuid, n);
  let truncated = false;
  if (top.items.length) {
    const sub = await zep("POST", `/graphs/${gid}/subgraph`, {
      body: { seed_node_uuids: top.items.map((n) => n.uuid), depth: 1, max_nodes: MAX_NODES, max_edges: MAX_EDGES },
    });
    merge(sub.nodes, sub.edges);
    truncated = sub.truncated;
  }
  const total = top.total_size ?? nodes.size;

  const cy = cytoscape({
    container: cyEl,
    minZoom: 0.1,
    maxZoom: 4,
    style: [
      { selector: "node", style: {
        label: "data(name)", "background-color": "data(color)", width: "data(size)", height: "data(size)",
        "font-size": 10, "text-valign": "bottom", "text-margin-y": 3, color: "#1d2330",
        "text-wrap": "ellipsis", "text-max-width": 130, "text-background-color": "#fff",
        "text-background-opacity": 0.7, "text-background-padding": 1 } },
      { selector: "node:selected", style: { "border-width": 4, "border-color": "#111827" } },
      { selector: "edge", style: {
        "curve-style": "bezier", "target-arrow-shape": "triangle", width: 1.5,
        "line-color": "#9aa4b2", "target-arrow-color": "#9aa4b2", label: "data(name)",
        "font-size": 7, "text-rotation": "autorotate", color: "#475467" } },
      { selector: "edge.invalid", style: { "line-style": "dashed", "line-color": "#f04438", "target-arrow-color": "#f04438" } },
      { selector: ".hidden", style: { display: "none" } },
    ],
  });
  // A handle for the browser console and the browser tests (they click real coordinates).
  window.graphrecallCy = cy;
  cy.on("tap", "node", (e) => select(e.target.id()));
  asOfInput.addEventListener("change", applyAsOf);

  if (selected && !nodes.has(selected)) {
    try {
      nodes.set(selected, await zep("GET", `/graphs/${gid}/nodes/${selected}`));
      await expand(selected, { draw: false });
    } catch (err) {
      details.replaceChildren(errorBox(err));
      selected = null;
    }
  }
  draw();
  relayout();
  if (selected) select(selected);

  function merge(ns, es) {
    for (const n of ns) if (!nodes.has(n.uuid)) nodes.set(n.uuid, n);
    for (const e of es) edges.set(e.uuid, e);
  }

  function degreeOf(uuid) {
    const n = nodes.get(uuid);
    if (n && typeof n.degree === "number") return n.degree;
    let d = 0;
    for (const e of edges.values()) if (e.source_node_uuid === uuid || e.target_node_uuid === uuid) d++;
    return d;
  }

  function draw() {
    const maxDegree = Math.max(1, ...[...nodes.keys()].map(degreeOf));
    const types = new Map();
    cy.batch(() => {
      for (const n of nodes.values()) {
        const type = nodeType(n);
        types.set(type, colorOf(type));
        const size = 18 + 42 * Math.sqrt(degreeOf(n.uuid) / maxDegree);
        const data = { id: n.uuid, name: n.name, color: colorOf(type), size };
        const el = cy.getElementById(n.uuid);
        if (el.empty()) cy.add({ group: "nodes", data });
        else el.data(data);
      }
      for (const e of edges.values()) {
        if (!nodes.has(e.source_node_uuid) || !nodes.has(e.target_node_uuid)) continue;
        if (cy.getElementById(e.uuid).nonempty()) continue;
        cy.add({ group: "edges", data: { id: e.uuid, source: e.source_node_uuid, target: e.target_node_uuid, name: e.name },
          classes: isInvalidated(e) ? "invalid" : "" });
      }
    });
    legend.replaceChildren(...[...types].map(([type, color]) => h("span", {}, h("i", { style: `background:${color}` }), type)));
    status.textContent = total > nodes.size || truncated
      ? `Showing ${nodes.size} of ${total} nodes and ${cy.edges().length} facts: a subgraph around the ${Math.min(SEEDS, top.items.length)} highest-degree nodes. Click a node and "Expand neighbours" to see more.`
      : `All ${nodes.size} nodes and ${cy.edges().length} facts.`;
    applyAsOf();
  }

  function relayout() {
    cy.layout({ name: "cose", animate: false, randomize: true, idealEdgeLength: 90, nodeRepulsion: 9000, padding: 30, fit: true }).run();
  }

  function applyAsOf() {
    asOf = asOfInput.value ? new Date(`${asOfInput.value}T23:59:59Z`) : null;
    setQuery({ node: selected, asof: asOfInput.value, seeds: query.get("seeds") });
    cy.batch(() => {
      for (const e of edges.values()) {
        const el = cy.getElementById(e.uuid);
        if (el.nonempty()) el.toggleClass("hidden", !validAt(e, asOf));
      }
    });
    drawText();
    if (selected) showDetails(selected);
  }

  function drawText() {
    const shown = [...edges.values()].filter((e) => nodes.has(e.source_node_uuid) && nodes.has(e.target_node_uuid) && validAt(e, asOf));
    const byDegree = [...nodes.values()].sort((a, b) => degreeOf(b.uuid) - degreeOf(a.uuid) || a.name.localeCompare(b.name));
    text.replaceChildren(
      h("h3", {}, `Nodes (${nodes.size})`),
      h("ul", { id: "node-list" }, byDegree.map((n) => h("li", { "data-uuid": n.uuid },
        h("button", { type: "button", class: "linklike", onclick: () => select(n.uuid) }, n.name),
        h("span", { class: "muted" }, ` · ${nodeType(n)} · degree ${degreeOf(n.uuid)}`)))),
      h("h3", {}, `Facts (${shown.length}${asOf ? ` valid on ${asOfInput.value}` : ""})`),
      h("ul", { id: "fact-list" }, shown.map((e) => factItem(e, { graphId: id }))),
    );
  }

  function select(uuid) {
    selected = uuid;
    cy.$(":selected").unselect();
    cy.getElementById(uuid).select();
    setQuery({ node: uuid, asof: asOfInput.value, seeds: query.get("seeds") });
    showDetails(uuid);
  }

  async function expand(uuid, { draw: redraw = true } = {}) {
    const page = await zep("POST", `/graphs/${gid}/nodes/${uuid}/neighbors`, { body: {}, query: { page_size: 50 } });
    merge(page.items.map((x) => x.node), page.items.flatMap((x) => x.edges));
    if (redraw) {
      draw();
      relayout();
      select(uuid);
    }
    return page.items.length;
  }

  async function showDetails(uuid) {
    const run = ++detailsRun;
    try {
      const [node, facts, episodes] = await Promise.all([
        zep("GET", `/graphs/${gid}/nodes/${uuid}`),
        zep("POST", `/graphs/${gid}/edges/list`, { body: { filters: { connected_node_uuids: [uuid] } }, query: { page_size: 100, order_by: "created_at", order: "desc" } }),
        zep("POST", `/graphs/${gid}/episodes/list`, { body: { filters: { mentioned_node_uuids: [uuid] } }, query: { page_size: 10, order_by: "created_at", order: "desc" } }),
      ]);
      if (run !== detailsRun || nav.stale()) return;
      const attributes = Object.entries(node.attributes || {});
      fill(details,
        h("h2", { id: "node-name" }, node.name),
        h("div", {}, (node.labels || []).map((l) => h("span", { class: "badge" }, l))),
        h("p", { id: "node-summary" }, node.summary || h("span", { class: "muted" }, "No summary.")),
        attributes.length ? kv(attributes.map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)])) : null,
        h("p", {},
          h("button", { type: "button", id: "expand", onclick: async (e) => {
            e.target.disabled = true;
            const added = await expand(uuid);
            e.target.textContent = `Expanded (${added} neighbours)`;
          } }, "Expand neighbours"), " ",
          link(`/ui/search/${id}?center=${uuid}&reranker=node_distance`, "Search around this node")),
        h("h3", {}, `Facts (${facts.items.length}${facts.next_cursor ? "+" : ""})`),
        facts.items.length ? h("ul", { id: "node-facts" }, facts.items.map((e) => factItem(e, { asOf, graphId: id }))) : h("p", { class: "muted" }, "No facts."),
        h("h3", {}, `Episodes mentioning it (${episodes.items.length}${episodes.next_cursor ? "+" : ""})`),
        episodes.items.length
          ? h("ul", { id: "node-episodes" }, episodes.items.map((ep) => h("li", {},
              h("span", { class: "muted" }, `${fmtDate(ep.reference_time || ep.created_at)} ${ep.role_name || ep.role || ep.source}: `),
              ep.content.length > 280 ? `${ep.content.slice(0, 280)}…` : ep.content)))
          : h("p", { class: "muted" }, "No episodes."),
      );
    } catch (err) {
      if (run === detailsRun) details.replaceChildren(errorBox(err));
    }
  }
}
