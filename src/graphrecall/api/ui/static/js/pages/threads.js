// Threads and episodes: a timeline of messages (or a graph's episodes) with each one's
// processed state and the facts it gave.

import { zep } from "../api.js";
import { factItem, graphHeader, loadGraph } from "../common.js";
import { fmtDate, h, link } from "../dom.js";

const PAGE = 100;

export async function threadsPage(view, [id], query) {
  const graph = await loadGraph(id);
  view.append(graphHeader(graph, id, "threads"));
  let entries;
  if (graph.user_uuid) {
    const threads = await zep("GET", "/threads", { query: { user_uuid: graph.user_uuid, page_size: PAGE, order_by: "updated_at", order: "desc" } });
    const current = query.get("thread") || (threads.items[0] && threads.items[0].uuid);
    view.append(
      h("h2", {}, `Threads (${threads.total_size ?? threads.items.length})`),
      threads.items.length
        ? h("ul", { id: "threads" }, threads.items.map((t) => h("li", {},
            t.uuid === current ? h("strong", {}, t.thread_id || t.uuid) : link(`/ui/threads/${id}?thread=${t.uuid}`, t.thread_id || t.uuid),
            h("span", { class: "muted" }, ` · updated ${fmtDate(t.updated_at)}`))))
        : h("p", { class: "muted" }, "No threads."),
    );
    if (!current) return;
    const messages = await zep("GET", `/threads/${current}/messages`, { query: { page_size: PAGE } });
    view.append(h("div", {}, h("h2", {}, `Messages of ${current}`),
      messages.next_cursor ? h("p", { class: "muted" }, `The first ${PAGE} messages.`) : null));
    entries = messages.items.map((m) => ({ uuid: m.uuid, when: m.created_at, who: m.name || m.role, content: m.content, processed: m.processed }));
  } else {
    const episodes = await zep("POST", `/graphs/${graph.uuid}/episodes/list`, { body: {}, query: { page_size: PAGE, order_by: "created_at", order: "asc" } });
    const count = episodes.total_size ?? episodes.items.length;
    view.append(h("div", {}, h("h2", {}, `Episodes (${count})`),
      count > episodes.items.length ? h("p", { class: "muted" }, `The first ${episodes.items.length}.`) : null));
    entries = episodes.items.map((e) => ({ uuid: e.uuid, when: e.reference_time || e.created_at, who: e.role_name || e.role || e.source, content: e.content, processed: e.processed }));
  }
  const facts = new Map();
  if (entries.length) {
    const edges = await zep("POST", `/graphs/${graph.uuid}/edges/list`, {
      body: { filters: { episode_uuids: entries.map((e) => e.uuid) } }, query: { page_size: 100, order_by: "created_at", order: "asc" },
    });
    for (const edge of edges.items) {
      for (const ep of edge.episode_uuids) {
        if (!facts.has(ep)) facts.set(ep, []);
        facts.get(ep).push(edge);
      }
    }
  }
  view.append(entries.length
    ? h("ol", { class: "timeline", id: "timeline" }, entries.map((e) => h("li", { class: e.processed ? "" : "unprocessed", "data-uuid": e.uuid },
        h("div", {},
          h("span", { class: `badge ${e.processed ? "ok" : "warn"}` }, e.processed ? "processed" : "pending"),
          h("span", { class: "muted" }, `${fmtDate(e.when)} · `), h("strong", {}, e.who || ""), ": ", e.content),
        (facts.get(e.uuid) || []).length
          ? h("ul", { class: "facts" }, facts.get(e.uuid).map((edge) => factItem(edge, { graphId: id })))
          : null)))
    : h("p", { class: "muted" }, "Nothing yet."));
}
