"""``graphrecall bench stall``: how much one tenant's heavy but valid requests slow another
tenant (issue 47, item 7: the victim's p50 at most 3x its idle p50).

Two projects share one ``graphrecall serve`` subprocess on loopback. Tenant A holds a
graph of ``--facts`` facts and a space of ``--memories`` memories; tenant B a small graph
of its own. B sends a small edge search, one after another with a short pause, first
alone, then while A's ``--attackers`` clients (a process of their own) send one kind of
heavy request as fast as they are answered:

- ``template``: ``get_context`` with a context template of many slots of a high limit;
- ``memory``: ``memory.search`` with a long fulltext and a long semantic query;
- ``terms``: an edge search whose query holds as many distinct words as it may;
- ``plain``: the floor: A's clients send B's own small search, as fast as answered (what
  any load of that many clients costs on this machine, heavy or not).

``--shape capped`` (the default) sends the heaviest request of each kind the server
accepts (the caps of ``domain/limits.py``); ``--shape audit`` the ones the outside audit
sent (a 60-slot template of limit 1000, a 10,000-character fulltext with a 900 KB
semantic query, 1,400 distinct terms), which the caps now refuse. The table gives B's
p50 / p95 per phase and its ratio to the idle p50, and what A's requests were answered;
the JSON file has every number.
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from graphrecall.domain import limits
from graphrecall.services.accounts import projects, spaces
from graphrecall.store import open_store
from graphrecall_bench.machine import code_version, loadavg, machine
from graphrecall_bench.server import ServerProcess
from graphrecall_bench.tenants import answers, latency_stats, time_calls, under_attack

KEY_A = "gr_bench_stall_tenant_a"
KEY_B = "gr_bench_stall_tenant_b"
SLUG_A = "stallspaceaa"
TARGET_RATIO = 3.0
KINDS = ("plain", "template", "memory", "terms")
BUSY_PAUSE_S = 0.05  # an attacker's pause after a refusal, as a client's backoff
WORDS = [
    "alpha", "harbour", "violin", "granite", "meadow", "lantern", "cobalt", "orchard",
    "falcon", "saffron", "glacier", "tundra", "copper", "willow", "ember", "quartz",
]  # fmt: skip


def _word(rng: random.Random, i: int) -> str:
    return f"{rng.choice(WORDS)}{i}"


def _prepare_keys(db: Path) -> None:
    """Tenant B's key in a project of its own, and tenant A's space (before the server
    starts: the store is the server's alone while it runs)."""
    store = open_store(db)
    try:
        projects.ensure_key(store, KEY_A)
        projects.ensure_key(store, KEY_B, "stall-tenant-b")
        if spaces.space_by_slug(store, SLUG_A) is None:
            spaces.create_space(store, projects.get_or_create_project(store), "a", SLUG_A)
    finally:
        store.close()


def _zep(port: int, key: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"http://127.0.0.1:{port}/api/v4",
        headers={"Authorization": f"Api-Key {key}"},
        timeout=600,
    )


def _me(port: int) -> httpx.Client:
    return httpx.Client(
        base_url=f"http://127.0.0.1:{port}",
        headers={"Authorization": f"Bearer {KEY_A}", "X-Me-Space": SLUG_A},
        timeout=600,
    )


def _wait(http: httpx.Client, task: str) -> None:
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        status = http.get(f"/tasks/{task}").json()["status"]
        if status in ("succeeded", "failed", "partial"):
            return
        time.sleep(0.2)
    raise RuntimeError(f"task {task} did not finish")


def _graph(http: httpx.Client, name: str, facts: int, seed: int) -> str:
    rng = random.Random(seed)
    graph = str(http.post("/graphs", json={"name": name}).json()["uuid"])
    for start in range(0, facts, limits.MAX_EDGES_PER_CALL):
        edges = []
        for i in range(start, min(facts, start + limits.MAX_EDGES_PER_CALL)):
            a, b = _word(rng, i), _word(rng, i + 1)
            edges.append(
                {
                    "fact": f"{a.title()} met {b.title()} near the {rng.choice(WORDS)}",
                    "fact_name": "MET",
                    "source_node": {"name": a.title()},
                    "target_node": {"name": b.title()},
                }
            )
        answer = http.post(f"/graphs/{graph}/edges", json={"edges": edges}).json()
        _wait(http, answer["task"]["uuid"])
    return graph


def _settle(http: httpx.Client, graph: str) -> None:
    """Wait until the graph's in-memory copies are built (``graph.warm`` says what is
    still building): the idle phase then times searches, not a first build."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        result = http.post(f"/graphs/{graph}/warm").json()["task"].get("result") or {}
        if not result.get("term_indexes_building") and not result.get("vector_indexes_building"):
            return
        time.sleep(0.5)


def _memories(port: int, count: int, seed: int) -> None:
    rng = random.Random(seed)
    with _me(port) as me:
        for start in range(0, count, 500):
            memories = [
                {"content": f"note {i}: {' '.join(_word(rng, j) for j in range(12))}",
                 "tree": "notes"}
                for i in range(start, min(count, start + 500))
            ]  # fmt: skip
            me.post("/api/v1/memory/rpc", json=_call("memory.batchCreate", {"memories": memories}))


def _call(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _template(shape: str) -> str:
    if shape == "audit":
        slots, limit = 60, 1000
    else:
        slots = limits.MAX_TEMPLATE_SLOTS
        limit = limits.MAX_TEMPLATE_ITEMS // slots
    kinds = ("edges", "entities", "episodes")
    return "\n".join(f"%{{{kinds[i % 3]} limit={limit}}}" for i in range(slots))


def _query(shape: str, rng: random.Random) -> str:
    terms = 1400 if shape == "audit" else limits.MAX_QUERY_TERMS
    text = " ".join(_word(rng, i) for i in range(terms))
    return text[:8192] if shape == "audit" else text


def _requests(shape: str, port: int, graph: str, template: str | None) -> dict[str, Any]:
    """Each kind's request, as (client maker, method, path, body)."""
    rng = random.Random(3)
    if shape == "audit":
        fulltext = " ".join(_word(rng, i) for i in range(2000))[:10_000]
        semantic = ("semantic " * 112_500)[:900_000]
    else:
        # As many distinct words as a query may hold, repeated to the length cap.
        words = [_word(rng, i) for i in range(limits.MAX_QUERY_TERMS)]
        fulltext = " ".join(words * 100)[: limits.MAX_FULLTEXT_CHARS].rsplit(" ", 1)[0]
        semantic = " ".join(_word(rng, i) for i in range(5000))[: limits.MAX_SEMANTIC_CHARS]
    return {
        "plain": ("zep", "POST", f"/graphs/{graph}/search/edges?page_size=10", {"query": "meadow"}),
        "template": (
            "zep",
            "POST",
            f"/graphs/{graph}/context",
            {"query": "who met whom near the harbour", "template_uuid": template},
        ),
        "memory": (
            "me",
            "POST",
            "/api/v1/memory/rpc",
            _call(
                "memory.search",
                {"fulltext": fulltext, "semantic": semantic, "limit": 10, "tree": "/notes"},
            ),
        ),
        "terms": (
            "zep",
            "POST",
            f"/graphs/{graph}/search/edges?page_size=10",
            {"query": _query(shape, rng)},
        ),
    }


def _victim(http: httpx.Client, graph: str, seconds: float, pause_s: float) -> list[float]:
    """B's small edge searches, one after another for ``seconds``: latencies in ms."""
    queries = ["who met the falcon", "meadow", "granite and copper", "lantern"]
    path = f"/graphs/{graph}/search/edges?page_size=10"
    return time_calls(
        lambda i: http.post(path, json={"query": queries[i % len(queries)]}),
        seconds,
        pause_s,
        lambda answer: answer.status_code == 200,
    )


def _attack(port: int, request: tuple[Any, ...], stop: threading.Event, out: list[Any]) -> None:
    face, method, path, body = request
    content = json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    with _zep(port, KEY_A) if face == "zep" else _me(port) as http:
        while not stop.is_set():
            started = time.perf_counter()
            answer = http.request(method, path, content=content, headers=headers)
            kind = str(answer.status_code)
            if face == "me" and answer.status_code == 200:
                error = answer.json().get("error")
                kind = "200" if error is None else f"rpc {error.get('code')}"
            out.append(((time.perf_counter() - started) * 1000, kind))
            if kind != "200":
                time.sleep(BUSY_PAUSE_S)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--facts", type=int, default=1000, help="tenant A's facts (1000)")
    parser.add_argument("--memories", type=int, default=1000, help="tenant A's memories (1000)")
    parser.add_argument("--attackers", type=int, default=4, help="tenant A's clients (4)")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--pause-ms", type=float, default=20.0, help="B's pause between calls")
    parser.add_argument(
        "--shape",
        choices=("capped", "audit"),
        default="capped",
        help="the heaviest requests the caps accept (capped) or the audit's (audit)",
    )
    parser.add_argument("--kinds", default=",".join(KINDS), help="which attacks, comma-separated")
    parser.add_argument("--out", type=Path, default=Path("bench-out"), help="output directory")
    parser.add_argument("--json", type=Path, default=None, help="JSON report path")


def run(args: argparse.Namespace) -> int:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    db = out / "stall.db"
    for stale in out.glob("stall.db*"):
        stale.unlink()
    _prepare_keys(db)
    pause = args.pause_ms / 1000
    kinds = [k for k in args.kinds.split(",") if k]
    phases: dict[str, Any] = {}
    with (
        ServerProcess(db, KEY_A, out / "stall-bench-server.log") as server,
        _zep(server.port, KEY_A) as a,
        _zep(server.port, KEY_B) as b,
    ):
        graph_a = _graph(a, "tenant a", args.facts, 1)
        graph_b = _graph(b, "tenant b", 50, 2)
        _memories(server.port, args.memories, 4)
        template = a.post(
            "/context-templates", json={"name": "heavy", "template": _template(args.shape)}
        )
        template_uuid = template.json().get("uuid") if template.status_code < 300 else None
        requests = _requests(args.shape, server.port, graph_a, template_uuid)
        _settle(a, graph_a)
        _settle(b, graph_b)
        _victim(b, graph_b, min(2.0, args.seconds), pause)  # warm up
        idle = _victim(b, graph_b, args.seconds, pause)
        phases["idle"] = {"tenant_b": latency_stats(idle)}
        loaded_phases: dict[str, Any] = {}
        for kind in kinds:
            if kind == "template" and template_uuid is None:
                # Refused when saved: there is no such request to send.
                loaded_phases[kind] = {"refused": template.text[:300]}
                continue
            loaded, attacks = under_attack(
                _attack,
                (server.port, requests[kind]),
                args.attackers,
                args.seconds,
                lambda: _victim(b, graph_b, args.seconds, pause),
            )
            stats = latency_stats(loaded)
            loaded_phases[kind] = {
                "tenant_b": stats,
                "tenant_a": {
                    "answers": answers(attacks),
                    **(latency_stats([ms for ms, _ in attacks]) if attacks else {}),
                },
            }
        # Idle again at the end: on a shared machine the load of others drifts over the
        # minutes a run takes, so each attack is compared with the mean of both idle p50s.
        after = _victim(b, graph_b, args.seconds, pause)
        phases["idle_after"] = {"tenant_b": latency_stats(after)}
        idle_p50 = (phases["idle"]["tenant_b"]["p50_ms"] + latency_stats(after)["p50_ms"]) / 2
        for phase in (*loaded_phases.values(), phases["idle"], phases["idle_after"]):
            if "tenant_b" in phase:
                phase["ratio_p50"] = phase["tenant_b"]["p50_ms"] / idle_p50
        phases = {"idle": phases["idle"], **loaded_phases, "idle_after": phases["idle_after"]}
        template_note = template.text[:300] if template_uuid is None else "saved"
    report = {
        "shape": args.shape,
        "facts": args.facts,
        "memories": args.memories,
        "attackers": args.attackers,
        "seconds": args.seconds,
        "template": template_note,
        "idle_p50_ms": idle_p50,
        "target_ratio_p50": TARGET_RATIO,
        "caps": {
            "template_slots": limits.MAX_TEMPLATE_SLOTS,
            "template_items": limits.MAX_TEMPLATE_ITEMS,
            "query_terms": limits.MAX_QUERY_TERMS,
            "fulltext_chars": limits.MAX_FULLTEXT_CHARS,
            "semantic_chars": limits.MAX_SEMANTIC_CHARS,
        },
        "phases": phases,
        "machine": machine(),
        "loadavg": loadavg(),
        "code": code_version(),
    }
    path: Path = args.json or out / f"stall-bench-{args.shape}.json"
    path.write_text(json.dumps(report, indent=2))
    print(table(report))
    print(f"\nwrote {path}")
    return 0


def table(report: dict[str, Any]) -> str:
    rows = [
        f"tenant A: {report['attackers']} clients, {report['shape']} requests"
        f" ({report['facts']:,} facts, {report['memories']:,} memories)",
        f"{'tenant B during':<16}{'requests':>9}{'p50 ms':>9}{'p95 ms':>9}{'x idle':>8}"
        f"   tenant A's answers (p50 ms)",
    ]
    for name, phase in report["phases"].items():
        if "refused" in phase:
            rows.append(f"{name:<16}{'(the request is refused: 400 when the template is saved)'}")
            continue
        s = phase["tenant_b"]
        ratio = f"{phase['ratio_p50']:.1f}"
        a = phase.get("tenant_a", {})
        answers = ", ".join(f"{k}: {v}" for k, v in a.get("answers", {}).items())
        a_p50 = f" ({a['p50_ms']:.0f})" if "p50_ms" in a else ""
        rows.append(
            f"{name:<16}{s['requests']:>9.0f}{s['p50_ms']:>9.1f}{s['p95_ms']:>9.1f}{ratio:>8}"
            f"   {answers}{a_p50}"
        )
    rows.append(
        f"x idle: against the mean of both idle p50s ({report['idle_p50_ms']:.1f} ms);"
        f" target: p50 <= {report['target_ratio_p50']:.0f}x idle"
    )
    return "\n".join(rows)
