// Pieces several pages share: the graph header with its tabs, and how a fact is shown.

import { zep } from "./api.js";
import { fmtDate, h, link } from "./dom.js";

/** The graph (a graph uuid or a user uuid both work, as on the API) and its title. */
export async function loadGraph(id) {
  const graph = await zep("GET", `/graphs/${encodeURIComponent(id)}`);
  let title = graph.name || graph.graph_id || graph.uuid;
  if (graph.user_uuid) {
    const user = await zep("GET", `/users/${graph.user_uuid}`);
    const name = [user.first_name, user.last_name].filter(Boolean).join(" ");
    title = `User ${user.user_id || user.uuid}${name ? ` (${name})` : ""}`;
  }
  return { ...graph, title };
}

const TABS = [
  ["graph", "Graph"],
  ["search", "Search"],
  ["context", "Context"],
  ["threads", "Timeline"],
];

export function graphHeader(graph, id, current) {
  return h("div", { class: "graph-header" },
    h("h1", {}, graph.title, " ", h("span", { class: "badge" }, graph.type)),
    h("nav", { class: "tabs", "aria-label": "Views of this graph" },
      TABS.map(([key, label], i) => [
        i ? " · " : "",
        key === current ? h("strong", {}, label) : link(`/ui/${key}/${id}`, label),
      ])),
  );
}

/** Was the fact true in the world at ``t``? A fact with no valid_at counts from when it
 * was learned. */
export function validAt(edge, t) {
  if (!t) return true;
  const start = edge.valid_at || edge.created_at;
  if (start && new Date(start) > t) return false;
  if (edge.invalid_at && new Date(edge.invalid_at) <= t) return false;
  return true;
}

export const isInvalidated = (edge) => Boolean(edge.invalid_at || edge.expired_at);

export function factItem(edge, { asOf = null, graphId = null } = {}) {
  const invalid = isInvalidated(edge);
  const outside = asOf && !validAt(edge, asOf);
  const node = (uuid, name) =>
    graphId ? link(`/ui/graph/${graphId}?node=${uuid}`, name || uuid) : name || uuid;
  return h("li", { class: `fact${invalid ? " invalid" : ""}${outside ? " outside" : ""}`, "data-uuid": edge.uuid },
    invalid ? h("span", { class: "badge bad" }, "invalidated") : null,
    outside ? h("span", { class: "badge warn" }, "not valid then") : null,
    h("span", { class: "text" }, edge.fact),
    h("div", { class: "muted" },
      node(edge.source_node_uuid, edge.source_node_name), ` —${edge.name}→ `,
      node(edge.target_node_uuid, edge.target_node_name), " · ",
      `valid ${edge.valid_at ? fmtDate(edge.valid_at) : "(from when learned)"}`,
      ` → ${edge.invalid_at ? fmtDate(edge.invalid_at) : "now"}`,
      edge.expired_at ? ` · expired ${fmtDate(edge.expired_at)}` : "",
      typeof edge.score === "number" ? ` · score ${edge.score.toFixed(4)}` : ""),
    // Why it was retired (ingest/single_valued.py records it in the edge's attributes).
    invalid && edge.attributes && edge.attributes.invalidation_reason
      ? h("div", { class: "muted why" }, `why: ${edge.attributes.invalidation_reason}`)
      : null,
  );
}
