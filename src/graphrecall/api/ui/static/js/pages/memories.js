// Memories of a Memory Engine space: the tree with counts, search in the three modes
// (semantic, full text, grep) with tree and meta filters, and one memory's content,
// meta, temporal range and history.

import { lastSpace, rememberSpace, rpc } from "../api.js";
import { errorBox, fmtDate, fmtScore, h, json, kv, link } from "../dom.js";
import { navigate, setQuery } from "../main.js";

export async function memoriesPage(view, [space], query) {
  if (!space) {
    const input = h("input", { name: "space", value: lastSpace(), required: true, placeholder: "space slug" });
    view.append(h("h1", {}, "Memories"),
      h("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); navigate(`/ui/memories/${encodeURIComponent(input.value.trim())}`); } },
        h("label", {}, "Space", input), h("button", { type: "submit" }, "Open")));
    return;
  }
  rememberSpace(space);
  const treeBox = h("aside", { class: "card", id: "memory-tree" });
  const results = h("div", { id: "memory-results" });
  const detail = h("div", { id: "memory-detail" });
  const f = {
    mode: h("select", { name: "mode" }, ["fulltext", "semantic", "grep"].map((m) => h("option", { value: m, selected: m === (query.get("mode") || "fulltext") }, m))),
    q: h("input", { type: "search", name: "q", value: query.get("q") || "", size: 32 }),
    tree: h("input", { name: "tree", value: query.get("tree") || "", size: 20, placeholder: "/share/projects" }),
    meta: h("input", { name: "meta", value: query.get("meta") || "", size: 24, placeholder: '{"kind": "note"}' }),
    at: h("input", { type: "date", name: "at", value: query.get("at") || "" }),
  };
  const run = async () => {
    setQuery({ mode: f.mode.value, q: f.q.value, tree: f.tree.value, meta: f.meta.value, at: f.at.value, id: query.get("id") });
    const params = { limit: 50 };
    if (f.q.value.trim()) params[f.mode.value] = f.q.value.trim();
    if (f.tree.value.trim()) params.tree = f.tree.value.trim();
    if (f.at.value) params.temporal = { contains: `${f.at.value}T12:00:00Z` };
    if (f.meta.value.trim()) {
      try {
        params.meta = JSON.parse(f.meta.value);
      } catch (err) {
        results.replaceChildren(errorBox({ message: `meta is not valid JSON: ${err.message}`, param: "meta" }));
        return;
      }
    }
    try {
      const found = await rpc(space, "memory.search", params);
      results.replaceChildren(
        h("p", { class: "muted" }, `${found.results.length} of ${found.total} memories`),
        h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "score"), h("th", {}, "path"), h("th", {}, "content"), h("th", {}, "updated"))),
          h("tbody", {}, found.results.map((m) => h("tr", {},
            h("td", { class: "num" }, fmtScore(m.score)),
            h("td", {}, h("button", { type: "button", class: "linklike", onclick: () => show(m.id) }, `${m.tree}${m.name ? `/${m.name}` : ""}`)),
            h("td", {}, m.content.length > 160 ? `${m.content.slice(0, 160)}…` : m.content),
            h("td", {}, fmtDate(m.updatedAt || m.createdAt)))))),
      );
    } catch (err) {
      results.replaceChildren(errorBox(err));
    }
  };
  const show = async (memoryId) => {
    setQuery({ mode: f.mode.value, q: f.q.value, tree: f.tree.value, meta: f.meta.value, at: f.at.value, id: memoryId });
    try {
      const [m, history] = await Promise.all([
        rpc(space, "memory.get", { id: memoryId }),
        rpc(space, "memory.history", { memoryId, limit: 50 }),
      ]);
      detail.replaceChildren(
        h("h2", {}, `${m.tree}${m.name ? `/${m.name}` : ""}`),
        kv([["id", m.id], ["version", String(m.version)], ["temporal", m.temporal ? `${fmtDate(m.temporal.start)} → ${m.temporal.end ? fmtDate(m.temporal.end) : "open"}` : "none"],
          ["created", fmtDate(m.createdAt)], ["updated", fmtDate(m.updatedAt)], ["embedded", m.hasEmbedding ? "yes" : "not yet"]]),
        h("h3", {}, "Content"), h("pre", { class: "block", id: "memory-content" }, m.content),
        h("h3", {}, "Meta"), json(m.meta),
        h("h3", {}, `History (${history.events.length})`),
        h("table", { id: "memory-history" }, h("thead", {}, h("tr", {}, h("th", {}, "at"), h("th", {}, "operation"), h("th", {}, "version"), h("th", {}, "content"))),
          h("tbody", {}, history.events.map((e) => h("tr", {}, h("td", {}, fmtDate(e.at)), h("td", {}, e.operation),
            h("td", { class: "num" }, e.version ?? ""), h("td", {}, e.content ?? ""))))),
      );
    } catch (err) {
      detail.replaceChildren(errorBox(err));
    }
  };
  const tree = await rpc(space, "memory.tree", {});
  treeBox.append(h("h2", {}, "Tree"), drawTree(tree.nodes, (path) => { f.tree.value = path; run(); }));
  view.append(
    h("h1", {}, `Memories in ${space}`),
    h("p", { class: "muted" }, link("/ui/memories", "Other space")),
    h("div", { class: "row" }, treeBox,
      h("section", { class: "grow" },
        h("form", { class: "inline", id: "memory-search", onsubmit: (e) => { e.preventDefault(); run(); } },
          h("label", {}, "Mode", f.mode), h("label", {}, "Query", f.q), h("label", {}, "Tree", f.tree),
          h("label", {}, "Meta (JSON)", f.meta), h("label", {}, "Valid at (temporal)", f.at), h("button", { type: "submit" }, "Search")),
        results, detail)),
  );
  await run();
  if (query.get("id")) await show(query.get("id"));
}

function drawTree(nodes, pick) {
  if (!nodes.length) return h("p", { class: "muted" }, "Empty space.");
  const depth = (p) => (p === "/" ? 0 : p.replace(/^\/|\/$/g, "").split("/").length);
  const sorted = [...nodes].sort((a, b) => a.path.localeCompare(b.path));
  return h("ul", { class: "tree" }, sorted.map((n) => h("li", { style: `padding-left:${depth(n.path) * 0.9}rem`, "data-path": n.path },
    h("button", { type: "button", class: "linklike", onclick: () => pick(n.path) }, n.path === "/" ? "/" : n.path.split("/").filter(Boolean).pop()),
    h("span", { class: "muted" }, ` (${n.count})`))));
}
