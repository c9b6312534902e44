// Users and graphs, with counts and a search by id or name.

import { zep } from "../api.js";
import { fmtDate, h, link } from "../dom.js";
import { setQuery } from "../main.js";

function userName(u) {
  return [u.first_name, u.last_name].filter(Boolean).join(" ");
}

function viewLinks(id) {
  return h("span", { class: "links" },
    link(`/ui/graph/${id}`, "graph"), " · ",
    link(`/ui/search/${id}`, "search"), " · ",
    link(`/ui/context/${id}`, "context"), " · ",
    link(`/ui/threads/${id}`, "timeline"));
}

export async function homePage(view, _args, query) {
  const project = await zep("GET", "/project");
  const q = query.get("q") || "";
  const input = h("input", { type: "search", name: "q", value: q, placeholder: "id, name or email", size: 32 });
  const results = h("div");
  const run = async () => {
    setQuery({ q: input.value });
    const search = input.value.trim() || undefined;
    const [users, graphs] = await Promise.all([
      zep("POST", "/users/list", { body: { search }, query: { page_size: 100, order_by: "created_at", order: "desc" } }),
      zep("POST", "/graphs/list", { body: { search }, query: { page_size: 100, order_by: "created_at", order: "desc" } }),
    ]);
    const count = (page) => page.total_size ?? page.items.length;
    const standalone = graphs.items.filter((g) => !g.user_uuid);
    results.replaceChildren(
      h("h2", {}, `Users (${count(users)})`),
      users.items.length
        ? h("table", { id: "users" },
            h("thead", {}, h("tr", {}, h("th", {}, "user id"), h("th", {}, "name"), h("th", {}, "email"), h("th", {}, "created"), h("th", {}, "views"))),
            h("tbody", {}, users.items.map((u) => h("tr", {},
              h("td", {}, link(`/ui/graph/${u.uuid}`, u.user_id || u.uuid)),
              h("td", {}, userName(u)), h("td", {}, u.email || ""),
              h("td", {}, fmtDate(u.created_at)), h("td", {}, viewLinks(u.uuid))))))
        : h("p", { class: "muted" }, "No users."),
      h("h2", {}, `Graphs (${count(graphs)}, of which ${standalone.length} standalone on this page)`),
      graphs.items.length
        ? h("table", { id: "graphs" },
            h("thead", {}, h("tr", {}, h("th", {}, "graph"), h("th", {}, "type"), h("th", {}, "description"), h("th", {}, "created"), h("th", {}, "views"))),
            h("tbody", {}, graphs.items.map((g) => h("tr", {},
              h("td", {}, link(`/ui/graph/${g.uuid}`, g.name || g.graph_id || g.uuid)),
              h("td", {}, g.type), h("td", {}, g.description || ""),
              h("td", {}, fmtDate(g.created_at)), h("td", {}, viewLinks(g.uuid))))))
        : h("p", { class: "muted" }, "No graphs."),
    );
  };
  view.append(
    h("h1", {}, `Project ${project.name}`),
    h("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); run(); } },
      h("label", {}, "Search users and graphs", input), h("button", { type: "submit" }, "Search")),
    results,
  );
  await run();
}
