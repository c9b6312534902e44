// The context preview: what get_context hands an agent, and which items made the block.

import { zep } from "../api.js";
import { graphHeader, loadGraph } from "../common.js";
import { errorBox, fmtDate, h, link } from "../dom.js";
import { setQuery } from "../main.js";

export async function contextPage(view, [id], query) {
  const graph = await loadGraph(id);
  const templates = await zep("POST", "/context-templates/list", { body: {}, query: { page_size: 100 } }).catch(() => ({ items: [] }));
  const q = h("input", { type: "search", name: "q", value: query.get("q") || "", size: 40, required: true });
  const budget = h("input", { type: "number", name: "budget", min: 100, step: 100, value: query.get("budget") || "", placeholder: "default", size: 8 });
  const recency = h("select", { name: "recency" }, ["", "off", "mild", "strong"].map((v) =>
    h("option", { value: v, selected: v === (query.get("recency") || "") }, v || "default")));
  const template = h("select", { name: "template" }, h("option", { value: "" }, "default"),
    templates.items.map((t) => h("option", { value: t.uuid, selected: t.uuid === query.get("template") }, t.name)));
  const out = h("div", { id: "context-out" });
  const run = async () => {
    setQuery({ q: q.value, budget: budget.value, recency: recency.value, template: template.value });
    out.replaceChildren(h("p", { class: "muted" }, "Assembling…"));
    try {
      const result = await zep("POST", `/graphs/${graph.uuid}/context`, { body: {
        query: q.value,
        include_results: true,
        max_characters: budget.value ? Number(budget.value) : undefined,
        recency_bias: recency.value || undefined,
        template_uuid: template.value || undefined,
      } });
      out.replaceChildren(
        h("div", { class: "row" },
          h("section", { class: "grow" },
            h("h2", {}, `Context block (${result.context.length} characters${result.truncated ? ", truncated to the budget" : ""})`),
            h("pre", { class: "block", id: "context-block" }, result.context || "(empty)")),
          h("section", { class: "grow" },
            h("h2", {}, "Selected items, in selection order"),
            selected(result.results, id))),
      );
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
  };
  view.append(
    graphHeader(graph, id, "context"),
    h("form", { class: "inline", id: "context-form", onsubmit: (e) => { e.preventDefault(); run(); } },
      h("label", {}, "Query", q), h("label", {}, "Budget (characters)", budget),
      h("label", {}, "Recency bias", recency), h("label", {}, "Template", template),
      h("button", { type: "submit" }, "Get context")),
    out,
  );
  if (q.value) await run();
}

function selected(results, id) {
  if (!results) return h("p", { class: "muted" }, "No items.");
  const rows = [];
  const add = (kind, items, text, href) => {
    for (const it of items || []) rows.push({ rank: it.selection_rank, kind, text: text(it), href: href ? href(it) : null });
  };
  add("fact", results.edges, (e) => `${e.fact}${e.invalid_at ? ` (invalid since ${fmtDate(e.invalid_at)})` : ""}`, (e) => `/ui/graph/${id}?node=${e.source_node_uuid}`);
  add("entity", results.nodes, (n) => `${n.name}: ${n.summary || ""}`, (n) => `/ui/graph/${id}?node=${n.uuid}`);
  add("episode", results.episodes, (ep) => ep.content);
  add("observation", results.observations, (o) => `${o.name}: ${o.summary}`);
  add("thread summary", results.thread_summaries, (t) => t.summary);
  rows.sort((a, b) => a.rank - b.rank);
  if (!rows.length) return h("p", { class: "muted" }, "No items were selected.");
  return h("table", { id: "context-items" },
    h("thead", {}, h("tr", {}, h("th", {}, "rank"), h("th", {}, "kind"), h("th", {}, "item"))),
    h("tbody", {}, rows.map((r) => h("tr", {}, h("td", { class: "num" }, r.rank), h("td", {}, r.kind),
      h("td", {}, r.href ? link(r.href, r.text) : r.text)))));
}
