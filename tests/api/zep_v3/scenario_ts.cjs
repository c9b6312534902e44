// An ordinary agent's calls through the published TypeScript SDK @getzep/zep-cloud
// 3.30.0 (the newest on npm), run by node with NODE_PATH pointing at its install.
// Usage: node scenario_ts.cjs BASE_URL API_KEY (ids prefixed with $SCENARIO_USER).
// Prints one JSON line per call: {"call": name, "ok": bool, "detail": str}; the same
// calls as scenario_py.py, in the SDK's camelCase.
"use strict";
const { ZepClient, entityFields } = require("@getzep/zep-cloud");

const [baseUrl, apiKey] = process.argv.slice(2);
const client = new ZepClient({ apiKey, baseUrl, maxRetries: 0 });
const prefix = process.env.SCENARIO_USER || "ts";
const ALICE = `${prefix}-alice`, THREAD = `${prefix}-thread-1`, KB = `${prefix}-kb`;
const state = { tasks: [] };

function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

async function waitTask(taskId) {
  const deadline = Date.now() + 120000;
  while (Date.now() < deadline) {
    const status = (await client.task.get(taskId)).status;
    if (["succeeded", "failed", "partial"].includes(status)) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${taskId} did not finish`);
}

async function gone(fn) {
  try {
    await fn();
  } catch (err) {
    if (err.statusCode === 404) return "404 after delete";
    throw err;
  }
  throw new Error("still there after delete");
}

const S = JSON.stringify;
const scenario = [
  ["user.add", async () => {
    const user = await client.user.add({ userId: ALICE, firstName: "Alice", email: "alice@example.com" });
    check(user.userId === ALICE && user.uuid, S(user));
    return user.uuid;
  }],
  ["user.get", async () => {
    const user = await client.user.get(ALICE);
    check(user.firstName === "Alice", S(user));
    return user.email;
  }],
  ["thread.create", async () => {
    const thread = await client.thread.create({ threadId: THREAD, userId: ALICE });
    check(thread.threadId === THREAD && thread.userId === ALICE, S(thread));
    return thread.uuid;
  }],
  ["thread.addMessages", async () => {
    const added = await client.thread.addMessages(THREAD, {
      messages: [
        { role: "user", name: "Alice", content: "I just moved to Lisbon." },
        { role: "assistant", name: "Agent", content: "Welcome to Portugal!" },
        { role: "user", name: "Alice", content: "I work at a bakery in Alfama now." },
      ],
    });
    check(added.messageUuids.length === 3 && added.taskId, S(added));
    state.messageTask = added.taskId;
    state.messageUuids = added.messageUuids;
    return added.taskId;
  }],
  ["task.get", async () => {
    const status = await waitTask(state.messageTask);
    check(status === "succeeded", status);
    return status;
  }],
  ["thread.get (processed)", async () => {
    const listed = await client.thread.get(THREAD);
    check(S(listed.messages.map((m) => m.uuid)) === S(state.messageUuids), S(listed));
    check(listed.messages.every((m) => m.processed), "not all processed");
    check(listed.totalCount === 3 && listed.rowCount === 3, S(listed));
    return `${listed.messages.length} messages`;
  }],
  ["thread.get lastn", async () => {
    const listed = await client.thread.get(THREAD, { lastn: 2 });
    const contents = listed.messages.map((m) => m.content);
    check(S(contents) === S(["Welcome to Portugal!", "I work at a bakery in Alfama now."]), S(contents));
    return S(contents);
  }],
  ["thread.getUserContext", async () => {
    const context = (await client.thread.getUserContext(THREAD)).context || "";
    check(context.includes("Lisbon"), context.slice(0, 300));
    return context.slice(0, 120);
  }],
  ["graph.add text", async () => {
    const episode = await client.graph.add({ userId: ALICE, type: "text", data: "Alice adopted a cat named Miso last spring." });
    check(episode.uuid && episode.taskId, S(episode));
    state.tasks.push(episode.taskId);
    state.textEpisode = episode.uuid;
    return episode.uuid;
  }],
  ["graph.add json", async () => {
    const data = S({ name: "Alice", employer: "Padaria Alfama", city: "Lisbon" });
    const episode = await client.graph.add({ userId: ALICE, type: "json", data });
    check(episode.source === "json", S(episode));
    state.tasks.push(episode.taskId);
    return episode.uuid;
  }],
  ["task.get (graph.add)", async () => {
    const statuses = [];
    for (const t of state.tasks) statuses.push(await waitTask(t));
    check(statuses.every((s) => s === "succeeded"), S(statuses));
    return S(statuses);
  }],
  ["graph.search edges", async () => {
    const found = await client.graph.search({ userId: ALICE, query: "Where does Alice live?", limit: 5 });
    const facts = (found.edges || []).map((e) => e.fact);
    check(facts.some((f) => f.includes("Lisbon")), S(facts));
    state.edgeUuid = found.edges[0].uuid;
    return S(facts.slice(0, 3));
  }],
  ["graph.search nodes", async () => {
    const found = await client.graph.search({ userId: ALICE, query: "Miso the cat", scope: "nodes" });
    const miso = (found.nodes || []).find((n) => n.name.includes("Miso"));
    check(miso, S(found.nodes));
    state.nodeUuid = miso.uuid;
    return miso.name;
  }],
  ["graph.search episodes", async () => {
    const found = await client.graph.search({ userId: ALICE, query: "bakery Alfama", scope: "episodes" });
    const contents = (found.episodes || []).map((e) => e.content);
    check(contents.some((c) => c.includes("bakery")), S(contents));
    return S(contents.slice(0, 2));
  }],
  ["user.getThreads", async () => {
    const threads = await client.user.getThreads(ALICE);
    check(S(threads.map((t) => t.threadId)) === S([THREAD]), S(threads));
    return `${threads.length}`;
  }],
  ["thread.listAll", async () => {
    const listed = await client.thread.listAll({ pageNumber: 1, pageSize: 10 });
    check(listed.threads.some((t) => t.threadId === THREAD) && listed.totalCount >= 1, S(listed));
    return `${listed.totalCount}`;
  }],
  ["user.getNode", async () => {
    const node = (await client.user.getNode(ALICE)).node;
    check(node && node.name.includes("Alice"), S(node));
    return node.name;
  }],
  ["graph.create", async () => {
    const graph = await client.graph.create({ graphId: KB, name: "Knowledge base" });
    check(graph.graphId === KB && graph.name === "Knowledge base", S(graph));
    return graph.uuid;
  }],
  ["graph.get", async () => {
    const graph = await client.graph.get(KB);
    check(graph.graphId === KB, S(graph));
    return graph.name;
  }],
  ["graph.listAll", async () => {
    const listed = await client.graph.listAll({ pageNumber: 1, pageSize: 50 });
    check(listed.graphs.some((g) => g.graphId === KB), S(listed));
    return `${listed.totalCount}`;
  }],
  ["graph.add to graphId", async () => {
    const episode = await client.graph.add({ graphId: KB, type: "text", data: "The Alfama bakery opens at seven." });
    const status = await waitTask(episode.taskId);
    check(status === "succeeded", status);
    return episode.uuid;
  }],
  ["graph.edge.getByUserId", async () => {
    const edges = await client.graph.edge.getByUserId(ALICE, { limit: 50 });
    check(edges.some((e) => e.fact.includes("Lisbon")), S(edges.map((e) => e.fact)));
    return `${edges.length}`;
  }],
  ["graph.node.getByUserId", async () => {
    const nodes = await client.graph.node.getByUserId(ALICE, { limit: 50 });
    check(nodes.some((n) => n.name === "Lisbon"), S(nodes.map((n) => n.name)));
    return `${nodes.length}`;
  }],
  ["graph.node.getByGraphId", async () => {
    const nodes = await client.graph.node.getByGraphId(KB, {});
    check(nodes.length >= 1, "no nodes");
    return S(nodes.map((n) => n.name));
  }],
  ["graph.episode.getByUserId", async () => {
    const found = await client.graph.episode.getByUserId(ALICE, { lastn: 10 });
    const contents = found.episodes.map((e) => e.content);
    check(contents.length === 5 && contents.some((c) => c.includes("Miso")), S(contents));
    return `${contents.length}`;
  }],
  ["graph.edge.get", async () => {
    const edge = await client.graph.edge.get(state.edgeUuid);
    check(edge.uuid === state.edgeUuid && edge.episodes.length > 0, S(edge));
    return edge.fact;
  }],
  ["graph.node.get", async () => {
    const node = await client.graph.node.get(state.nodeUuid);
    check(node.name.includes("Miso"), S(node));
    return node.name;
  }],
  ["graph.node.getEdges", async () => {
    const edges = await client.graph.node.getEdges(state.nodeUuid);
    check(edges.length >= 1, "no edges");
    return S(edges.map((e) => e.fact));
  }],
  ["graph.episode.get", async () => {
    const episode = await client.graph.episode.get(state.textEpisode);
    check(episode.processed === true && episode.content.includes("Miso"), S(episode));
    return episode.content;
  }],
  ["graph.episode.getNodesAndEdges", async () => {
    const mentions = await client.graph.episode.getNodesAndEdges(state.textEpisode);
    const names = (mentions.nodes || []).map((n) => n.name);
    check(names.some((n) => n.includes("Miso")), S(names));
    return S(names);
  }],
  ["thread.getSummary", async () => {
    const summary = await client.thread.getSummary(THREAD);
    check(summary.threadId === THREAD && (summary.summary || "").includes("Lisbon"), S(summary));
    return summary.summary.slice(0, 100);
  }],
  ["thread.message.update", async () => {
    const message = await client.thread.message.update(state.messageUuids[0], { metadata: { seen: true } });
    check(S(message.metadata) === S({ seen: true }) && message.content.endsWith("Lisbon."), S(message));
    return S(message.metadata);
  }],
  ["graph.episode.listByUserId", async () => {
    const found = await client.graph.episode.listByUserId(ALICE, { limit: 2, direction: "asc" });
    const contents = found.map((e) => e.content);
    check(S(contents) === S(["I just moved to Lisbon.", "Welcome to Portugal!"]), S(contents));
    return S(contents);
  }],
  ["graph.search observations", async () => {
    const found = await client.graph.search({ userId: ALICE, query: "Alice", scope: "observations" });
    check(Array.isArray(found.observations) && found.edges === undefined, S(found));
    return `${found.observations.length}`;
  }],
  ["user.warm", async () => (await client.user.warm(ALICE)).message],
  ["graph.addFactTriple", async () => {
    const added = await client.graph.addFactTriple({
      userId: ALICE, fact: "Alice mentors Bruno", factName: "MENTORS",
      sourceNodeName: "Alice", targetNodeName: "Bruno",
    });
    check(added.edge.fact === "Alice mentors Bruno" && added.targetNode.name === "Bruno", S(added));
    return added.taskId;
  }],
  ["graph.setOntology + listEntityTypes", async () => {
    const pet = { description: "An animal someone keeps.", fields: { species: entityFields.text("cat, dog, ...") } };
    await client.graph.setOntology({ Pet: pet }, {}, { userIds: [ALICE] });
    const found = await client.graph.listEntityTypes({ userId: ALICE });
    const names = (found.entityTypes || []).map((t) => t.name);
    check(S(names) === S(["Pet"]), S(found));
    return S(names);
  }],
  ["thread.delete", async () => {
    await client.thread.delete(THREAD);
    return gone(() => client.thread.get(THREAD));
  }],
  ["graph.delete", async () => {
    await client.graph.delete(KB);
    return gone(() => client.graph.get(KB));
  }],
  ["user.delete", async () => {
    await client.user.delete(ALICE);
    return gone(() => client.user.get(ALICE));
  }],
];

(async () => {
  for (const [name, fn] of scenario) {
    try {
      const detail = await fn();
      console.log(S({ call: name, ok: true, detail: String(detail).slice(0, 300) }));
    } catch (err) {
      const body = err.body ? ` ${S(err.body)}` : "";
      console.log(S({ call: name, ok: false, detail: `${err.message}${body}`.slice(0, 600) }));
    }
  }
})();
