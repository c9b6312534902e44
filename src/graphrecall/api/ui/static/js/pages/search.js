// The search playground: the five scopes with every knob of the search request, results
// with their scores, each linked into the graph view.

import { zep } from "../api.js";
import { factItem, graphHeader, loadGraph } from "../common.js";
import { errorBox, fmtDate, fmtScore, h, link } from "../dom.js";
import { setQuery } from "../main.js";

const SCOPES = { edges: "edges", nodes: "nodes", episodes: "episodes", observations: "observations", thread_summaries: "thread-summaries" };
const RERANKERS = ["rrf", "mmr", "node_distance", "episode_mentions", "cross_encoder"];

function select(name, options, value) {
  return h("select", { name }, options.map((o) => h("option", { value: o, selected: o === value }, o)));
}

export async function searchPage(view, [id], query) {
  const graph = await loadGraph(id);
  const f = {
    q: h("input", { type: "search", name: "q", value: query.get("q") || "", size: 40, required: true }),
    scope: select("scope", Object.keys(SCOPES), query.get("scope") || "edges"),
    reranker: select("reranker", RERANKERS, query.get("reranker") || "rrf"),
    mmr: h("input", { type: "number", name: "mmr_lambda", min: 0, max: 1, step: 0.05, value: query.get("mmr_lambda") || "", placeholder: "0.5", size: 5 }),
    center: h("input", { type: "text", name: "center", value: query.get("center") || "", size: 38, placeholder: "node uuid", list: "center-nodes" }),
    limit: h("input", { type: "number", name: "limit", min: 1, max: 50, value: query.get("limit") || 10, size: 4 }),
    filters: h("textarea", { name: "filters", rows: 4, cols: 60, placeholder: '{"edge_types": ["LIKES"]}' }),
  };
  f.filters.value = query.get("filters") || "";
  const results = h("div", { id: "results" });
  // The best-connected nodes, offered as center nodes by name.
  const top = await zep("POST", `/graphs/${graph.uuid}/nodes/list`, { body: {}, query: { page_size: 50, order_by: "degree", order: "desc" } });
  const centers = h("datalist", { id: "center-nodes" }, top.items.map((n) => h("option", { value: n.uuid, label: n.name })));
  const run = async () => {
    results.replaceChildren(h("p", { class: "muted" }, "Searching…"));
    let filters;
    if (f.filters.value.trim()) {
      try {
        filters = JSON.parse(f.filters.value);
      } catch (err) {
        results.replaceChildren(errorBox({ message: `filters is not valid JSON: ${err.message}`, param: "filters" }));
        return;
      }
    }
    const scope = f.scope.value;
    setQuery({ q: f.q.value, scope, reranker: f.reranker.value, mmr_lambda: f.mmr.value, center: f.center.value, limit: f.limit.value, filters: f.filters.value.trim() });
    const body = {
      query: f.q.value,
      reranker: f.reranker.value,
      mmr_lambda: f.mmr.value === "" ? undefined : Number(f.mmr.value),
      center_node_uuid: f.center.value.trim() || undefined,
      filters,
    };
    const started = performance.now();
    try {
      const page = await zep("POST", `/graphs/${graph.uuid}/search/${SCOPES[scope]}`, { body, query: { page_size: f.limit.value } });
      const ms = performance.now() - started;
      results.replaceChildren(
        h("p", { class: "muted" }, `${page.items.length} results in ${ms.toFixed(0)} ms`),
        page.items.length ? table(scope, page.items, id) : h("p", {}, "Nothing found."),
      );
    } catch (err) {
      results.replaceChildren(errorBox(err));
    }
  };
  view.append(
    graphHeader(graph, id, "search"),
    h("form", { class: "inline", id: "search-form", onsubmit: (e) => { e.preventDefault(); run(); } },
      h("label", {}, "Query", f.q), h("label", {}, "Scope", f.scope), h("label", {}, "Reranker", f.reranker),
      h("label", {}, "mmr_lambda", f.mmr), h("label", {}, "Center node", f.center, centers), h("label", {}, "Limit", f.limit),
      h("label", {}, "Filters (JSON)", f.filters), h("button", { type: "submit" }, "Search")),
    results,
  );
  if (f.q.value) await run();
}

function table(scope, items, id) {
  const head = (...cols) => h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "score"), h("th", {}, "relevance"), cols.map((c) => h("th", {}, c))));
  const scores = (item, i) => [h("td", { class: "num" }, i + 1), h("td", { class: "num" }, fmtScore(item.score)), h("td", { class: "num" }, fmtScore(item.relevance))];
  const rows = {
    edges: () => [head("fact"), items.map((e, i) => h("tr", {}, scores(e, i), h("td", {}, h("ul", { class: "plain" }, factItem(e, { graphId: id })))))],
    nodes: () => [head("node", "summary"), items.map((n, i) => h("tr", {}, scores(n, i),
      h("td", {}, link(`/ui/graph/${id}?node=${n.uuid}`, n.name)), h("td", {}, n.summary || "")))],
    episodes: () => [head("when", "content"), items.map((ep, i) => h("tr", {}, scores(ep, i),
      h("td", {}, fmtDate(ep.reference_time || ep.created_at)),
      h("td", {}, `${ep.role_name || ep.role || ep.source}: ${ep.content}`)))],
    observations: () => [head("observation", "summary"), items.map((o, i) => h("tr", {}, scores(o, i), h("td", {}, o.name), h("td", {}, o.summary)))],
    thread_summaries: () => [head("thread", "summary"), items.map((t, i) => h("tr", {}, scores(t, i), h("td", {}, t.thread_uuid), h("td", {}, t.summary)))],
  };
  return h("table", { class: "results" }, rows[scope]());
}
