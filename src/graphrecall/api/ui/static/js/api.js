// The public APIs, exactly as the SDKs call them: Zep v4 REST under /api/v4 with
// "Authorization: Api-Key <key>", and the Memory Engine JSON-RPC with a Bearer key and
// the X-Me-Space header. The key is kept in sessionStorage (gone when the tab closes)
// and may arrive in the URL fragment (#key=...), which browsers never send to a server.

const KEY = "graphrecall.key";
const SPACE = "graphrecall.space";

export class ApiError extends Error {
  constructor(status, message, param) {
    super(message);
    this.status = status;
    this.param = param;
  }
}

export function takeKeyFromFragment() {
  const hash = location.hash.replace(/^#/, "");
  if (!hash) return;
  const params = new URLSearchParams(hash);
  const key = params.get("key");
  if (!key) return;
  sessionStorage.setItem(KEY, key);
  params.delete("key");
  const rest = params.toString();
  // Drop the key from the address bar (and so from history and screenshots).
  history.replaceState(null, "", location.pathname + location.search + (rest ? `#${rest}` : ""));
}

export const getKey = () => sessionStorage.getItem(KEY);
export const setKey = (key) => sessionStorage.setItem(KEY, key);
export const clearKey = () => sessionStorage.removeItem(KEY);
export const lastSpace = () => sessionStorage.getItem(SPACE) || "";
export const rememberSpace = (slug) => sessionStorage.setItem(SPACE, slug);

async function parse(response) {
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return { error: { message: text } };
  }
}

/** A Zep v4 call: zep("POST", "/graphs/x/search/edges", {body, query}). */
export async function zep(method, path, { body, query } = {}) {
  const url = new URL(`/api/v4${path}`, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, v);
  }
  const headers = { Authorization: `Api-Key ${getKey() || ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await parse(response);
  if (!response.ok) {
    const e = (data && data.error) || {};
    throw new ApiError(response.status, e.message || `HTTP ${response.status}`, e.param);
  }
  return data;
}

let rpcId = 0;

/** A Memory Engine JSON-RPC call in one space. */
export async function rpc(space, method, params = {}) {
  const response = await fetch("/api/v1/memory/rpc", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${getKey() || ""}`,
      "X-Me-Space": space,
      "Content-Type": "application/json",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
  });
  const data = await parse(response);
  const err = data && data.error;
  if (!response.ok || err) {
    const message = (err && err.message) || `HTTP ${response.status}`;
    const param = err && err.data ? err.data.param : undefined;
    throw new ApiError(response.ok ? 400 : response.status, message, param);
  }
  return data.result;
}
