// A tiny DOM helper: h("a", {href, class, onclick}, ...children). Text is always set as
// text (never as HTML), so data from the API cannot inject markup.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (name === "class") {
      el.className = value;
    } else if (name === "dataset") {
      Object.assign(el.dataset, value);
    } else if (name === "value") {
      el.value = value;
    } else {
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** An in-app link: main.js turns clicks on it into history navigation. */
export function link(href, ...children) {
  return h("a", { href, "data-nav": true }, ...children);
}

export function errorBox(err) {
  const where = err && err.param ? ` (${err.param})` : "";
  return h("p", { class: "error", role: "alert" }, `${err && err.message ? err.message : err}${where}`);
}

export function fmtDate(value) {
  if (!value) return "";
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : d.toISOString().replace("T", " ").slice(0, 16) + "Z";
}

export function fmtScore(value) {
  return typeof value === "number" ? value.toFixed(4) : "";
}

export function kv(pairs) {
  return h("dl", { class: "kv" }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

export function json(value) {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
}

/** ``el.replaceChildren`` that skips null/false children as ``h`` does (the DOM method
 * would write them as the text "null"). */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}
