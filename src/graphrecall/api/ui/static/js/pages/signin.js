// Sign in: the API key is checked against GET /api/v4/project and kept in sessionStorage.

import { setKey, clearKey, zep } from "../api.js";
import { errorBox, h } from "../dom.js";
import { navigate } from "../main.js";

export async function signinPage(view, _args, _query, nav) {
  const input = h("input", { type: "password", name: "key", id: "key", autocomplete: "off", required: true, size: 48 });
  const status = h("div");
  const form = h("form", { class: "inline", onsubmit: async (e) => {
    e.preventDefault();
    status.replaceChildren();
    setKey(input.value.trim());
    try {
      await zep("GET", "/project");
      navigate(nav.next(), { replace: true });
    } catch (err) {
      clearKey();
      status.append(errorBox(err.status === 401 ? "That key was not accepted." : err));
    }
  } },
    h("label", {}, "API key", input),
    h("button", { type: "submit" }, "Sign in"),
  );
  view.append(
    h("h1", {}, "Sign in"),
    h("div", { class: "card" },
      h("p", {}, "The key stays in this tab (sessionStorage) and is sent only in the Authorization header. ",
        "A link can carry it in the fragment: ", h("code", {}, "/ui/#key=…"), " (never in the query string)."),
      form, status),
  );
  input.focus();
}
