// The router: one page for every path under /ui/, drawn from the path and query string,
// so every view has a URL that can be shared (the key never travels in it).

import { ApiError, clearKey, getKey, takeKeyFromFragment } from "./api.js";
import { errorBox, h, link } from "./dom.js";
import { contextPage } from "./pages/context.js";
import { graphPage } from "./pages/graph.js";
import { homePage } from "./pages/home.js";
import { memoriesPage } from "./pages/memories.js";
import { searchPage } from "./pages/search.js";
import { signinPage } from "./pages/signin.js";
import { threadsPage } from "./pages/threads.js";

const NEXT = "graphrecall.next";

const ROUTES = [
  [/^\/ui\/?$/, homePage],
  [/^\/ui\/signin\/?$/, signinPage],
  [/^\/ui\/graph\/([^/]+)\/?$/, graphPage],
  [/^\/ui\/search\/([^/]+)\/?$/, searchPage],
  [/^\/ui\/context\/([^/]+)\/?$/, contextPage],
  [/^\/ui\/threads\/([^/]+)\/?$/, threadsPage],
  [/^\/ui\/memories(?:\/([^/]*))?\/?$/, memoriesPage],
];

export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  render();
}

/** Rewrites the query string of the current page without drawing it again. */
export function setQuery(params) {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") search.set(k, v);
  }
  const qs = search.toString();
  history.replaceState(null, "", location.pathname + (qs ? `?${qs}` : ""));
}

function drawNav() {
  const nav = document.getElementById("nav");
  nav.replaceChildren(
    link("/ui/", "Users & graphs"),
    link("/ui/memories", "Memories"),
    h("a", { href: "/docs" }, "API docs"),
    getKey()
      ? h("a", { href: "/ui/signin", class: "right", onclick: (e) => {
          e.preventDefault();
          clearKey();
          navigate("/ui/signin");
        } }, "Sign out")
      : link("/ui/signin", "Sign in"),
  );
}

let generation = 0;

export async function render() {
  takeKeyFromFragment();
  drawNav();
  const main = document.getElementById("app");
  const path = decodeURI(location.pathname);
  const match = ROUTES.map(([re, page]) => [re.exec(path), page]).find(([m]) => m);
  if (!match) {
    main.replaceChildren(h("h1", {}, "Not found"), h("p", {}, "No such page: ", path), link("/ui/", "Start page"));
    return;
  }
  const [m, page] = match;
  if (page !== signinPage && !getKey()) {
    sessionStorage.setItem(NEXT, location.pathname + location.search);
    navigate("/ui/signin", { replace: true });
    return;
  }
  const mine = ++generation;
  const view = h("div", { class: "page" });
  main.replaceChildren(view);
  try {
    await page(view, m.slice(1).map((s) => (s ? decodeURIComponent(s) : s)), new URLSearchParams(location.search), {
      next: () => {
        const next = sessionStorage.getItem(NEXT) || "/ui/";
        sessionStorage.removeItem(NEXT);
        return next;
      },
      stale: () => mine !== generation,
    });
  } catch (err) {
    if (mine !== generation) return;
    if (err instanceof ApiError && err.status === 401) {
      clearKey();
      sessionStorage.setItem(NEXT, location.pathname + location.search);
      navigate("/ui/signin", { replace: true });
      return;
    }
    view.append(errorBox(err));
  }
}

document.addEventListener("click", (event) => {
  const a = event.target.closest && event.target.closest("a[data-nav]");
  if (!a || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(a.getAttribute("href"));
});
window.addEventListener("popstate", render);
window.addEventListener("hashchange", render);
render();
