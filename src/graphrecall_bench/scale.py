"""``graphrecall bench scale``: how search, get_context, ingestion and storage grow with
the graph (10k, 100k and 1M facts in one user graph by default).

A thin layer over ``bench search``'s runner: for each size it builds (or reuses) the
synthetic database, times every search case and get_context on the chosen layers
(default: engine in-process and the real SDK through a server), and then adds what only
a comparison across sizes needs:

- bytes per fact: the database file's size over its facts;
- ingestion throughput: a fixed batch of synthetic chat messages (the same batch for every
  size) added to one of the user's threads through the services and processed by the
  real worker pipeline (offline extractor, MiniLM embedder) in this thread, in messages/s,
  so a slowdown as the graph grows shows;
- the real/derived vector split (``--embed-cap``, see ``bench.build``): above the cap,
  vectors are derived from real ones, which keeps exact vector search's cost but not its
  meaning, so hit@10 is withheld (JSON ``null``) for sizes with derived vectors;
- a PNG of p95 latency against size, one line per case and one panel per layer.

Everything goes to JSON after each size, so a long run that stops keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphrecall_bench import report, search, search_cases
from graphrecall_bench.build import Built, ensure_db
from graphrecall_bench.synthetic import generate
from graphrecall_bench.tables import ms, text_table, write_json

DEFAULT_SIZES = "10000,100000,1000000"
DEFAULT_EMBED_CAP = 200_000
INGEST_MESSAGES = 150
INGEST_SEED_OFFSET = 1_000  # the batch comes from another graph than the one it joins
BATCH = 30  # messages per add_messages call (the API's limit)
WITHHELD = "vectors beyond --embed-cap are derived, so recall is not a quality number"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    search.add_common_arguments(
        parser,
        sizes=DEFAULT_SIZES,
        queries=100,
        layers=("engine", "sdk"),
        case_budget=60.0,
        json_name="scale.json",
    )
    parser.add_argument(
        "--embed-cap",
        type=int,
        default=DEFAULT_EMBED_CAP,
        help="real embeddings per record kind; vectors past it are derived from real ones"
        f" ({DEFAULT_EMBED_CAP:,}; 0 = no cap)",
    )
    parser.add_argument(
        "--ingest-messages",
        type=int,
        default=INGEST_MESSAGES,
        help=f"chat messages ingested into each graph (0 skips; {INGEST_MESSAGES})",
    )
    parser.add_argument("--png", help="where to draw the chart (default OUT/scale.png)")
    parser.add_argument(
        "--build-only", action="store_true", help="build (or check) the databases and stop"
    )
    parser.add_argument(
        "--show",
        metavar="JSON[,JSON]",
        help="measure nothing: merge the runs of saved results (a later file wins for a"
        " size in both), print the table, draw the chart and write the merged JSON",
    )


def run(args: argparse.Namespace) -> int:
    plan = search.make_plan(args, "scale.json")
    if args.embed_cap < 0 or args.ingest_messages < 0:
        raise ValueError("--embed-cap and --ingest-messages must not be negative")
    cap = args.embed_cap or None
    png = Path(args.png) if args.png else plan.out_dir / "scale.png"
    if args.show:
        result = merge([json.loads(Path(f).read_text()) for f in args.show.split(",") if f])
        print(table(result), flush=True)
        result["png"] = str(png) if draw_chart(result, png) else None
        write_json(plan.json_path, result)
        print(f"wrote {plan.json_path}" + (f" and {png}" if result["png"] else ""), flush=True)
        return 0
    if args.build_only:
        for size in plan.sizes:
            built = ensure_db(size, plan.seed, plan.out_dir, embed_cap=cap)
            print(f"[{size:,}] {built.path}: {_vector_note(built.stats.vectors)}", flush=True)
        return 0
    result = search.new_result("scale", plan)
    result["params"].update(embed_cap=cap, ingest_messages=args.ingest_messages)
    for size in plan.sizes:
        built = ensure_db(size, plan.seed, plan.out_dir, embed_cap=cap)

        def after(db: Path, built: Built = built) -> dict[str, Any]:
            out: dict[str, Any] = {"ingest": None}
            if args.ingest_messages:
                n = args.ingest_messages
                print(f"[{built.graph.size:,}] ingesting {n} messages", flush=True)
                out["ingest"] = ingest_batch(db, built, n, plan.seed)
            # The copy as this code's schema left it (opening it migrates an older build).
            out["copy_bytes_after_run"] = sum(
                Path(f"{db}{suffix}").stat().st_size
                for suffix in ("", "-wal")
                if Path(f"{db}{suffix}").exists()
            )
            return out

        run_result = search.run_size(built, plan, on_copy=after)
        run_result.update(size_summary(run_result))
        result["runs"].append(run_result)
        write_json(plan.json_path, result)
        print(table(result), flush=True)
    drawn = draw_chart(result, png)
    result["png"] = str(png) if drawn else None
    write_json(plan.json_path, result)
    print(f"wrote {plan.json_path}" + (f" and {png}" if drawn else ""), flush=True)
    return 0


def merge(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Saved results as one: the first's header, every size once, ordered. A size measured
    in several files (e.g. searches in one run, ingestion in another) keeps every
    measurement: for the same case and layer, and for any other key, the later file wins,
    except that a value it lacks (``null``) does not replace one measured earlier. Each
    file's header is kept under ``merged_from``."""
    if not results:
        raise ValueError("--show needs at least one JSON file")
    by_size: dict[int, dict[str, Any]] = {}
    for result in results:
        if result.get("benchmark") != "scale":
            raise ValueError("--show reads the JSON of bench scale runs only")
        for run in result["runs"]:
            into = by_size.setdefault(run["size"], {"results": []})
            measured = {(r["case"], r["layer"]): r for r in into["results"]}
            measured.update({(r["case"], r["layer"]): r for r in run["results"]})
            for key, value in run.items():
                if key == "results" or (value is None and key in into):
                    continue
                if isinstance(value, dict) and isinstance(into.get(key), dict):
                    value = {**into[key], **value}  # e.g. one run's extras beside another's
                into[key] = value
            into["results"] = list(measured.values())
    merged = {k: v for k, v in results[0].items() if k != "runs"}
    merged["runs"] = [by_size[size] for size in sorted(by_size)]
    merged["params"] = {**merged["params"], "sizes": sorted(by_size)}
    merged["merged_from"] = [{k: v for k, v in r.items() if k != "runs"} for r in results]
    return merged


def size_summary(run: dict[str, Any]) -> dict[str, Any]:
    """Bytes per fact, the vector split, and hit@10 withheld where vectors are derived."""
    build = run["build"]
    derived = sum(v["derived"] for v in build["vectors"].values())
    out: dict[str, Any] = {
        "facts": run["size"],
        "db_bytes": build["db_bytes"],
        "bytes_per_fact": round(build["db_bytes"] / run["size"], 1),
        "vectors": build["vectors"],
        "derived_vectors": derived,
        "hit_at_10_withheld": WITHHELD if derived else None,
    }
    if derived:
        for r in run["results"]:
            r["hit_at_10"] = None
    return out


# -- ingestion ---------------------------------------------------------------------------


def chat_batch(count: int, seed: int) -> list[tuple[str, str, str, str]]:
    """``count`` chat messages (role, speaker, text, reference time) from a small synthetic
    graph of another seed: the same user, the same kinds of sentences and many of the same
    names as the big graph, so entity and fact resolution meet existing records."""
    facts = count * 2 + 10  # about 0.7 messages per fact
    episodes = generate(facts, seed + INGEST_SEED_OFFSET).episodes[:count]
    if len(episodes) < count:
        raise ValueError(f"the generator gave {len(episodes)} messages, {count} wanted")
    return [(e.role or "user", e.role_name or "", e.content, e.reference_time) for e in episodes]


def ingest_batch(db: Path, built: Built, count: int, seed: int) -> dict[str, Any]:
    """Add ``count`` messages to the user's latest thread in ``db`` through the services,
    then process the queued tasks with the real pipeline, timed alone."""
    from graphrecall.domain.inputs import MessageCreate, MessagesAdd
    from graphrecall.domain.models import Edge, Episode, Node, Project
    from graphrecall.services.container import Services
    from graphrecall.services.graph import threads
    from graphrecall.store import open_store
    from graphrecall_bench.ingest_runs import drain_tasks, time_breakdown, timed_models

    messages = chat_batch(count, seed)
    graph_uuid = built.graph.graph.uuid
    store = open_store(db)
    try:
        embedder, extractor, model_load_s = timed_models()
        ctx = Services(store=store, embedder=embedder)
        project = store.get(Project, built.graph.project.uuid)
        assert project is not None
        scope = {"graph_uuid": graph_uuid}
        before = {kind.__name__.lower(): store.count(kind, scope) for kind in (Node, Edge)}
        started = time.perf_counter()
        for start in range(0, count, BATCH):
            body = MessagesAdd(
                messages=[
                    MessageCreate(role=role, name=name, content=text, reference_time=when)  # type: ignore[arg-type]
                    for role, name, text, when in messages[start : start + BATCH]
                ]
            )
            threads.add_messages(ctx, project, built.graph.threads[-1].uuid, body)
        add_s = time.perf_counter() - started
        cpu_started = time.process_time()
        tasks, failed, seconds = drain_tasks(store, embedder, extractor, log=print)
        cpu_s = time.process_time() - cpu_started
        after = {kind.__name__.lower(): store.count(kind, scope) for kind in (Node, Edge)}
        processed = store.count(Episode, {**scope, "processed": False})
    finally:
        store.close()
    return {
        "messages": count,
        "tasks": tasks,
        "failed_tasks": len(failed),
        "failures": failed[:5],
        "add_s": round(add_s, 3),
        "seconds": round(seconds, 3),
        "messages_per_s": round(count / seconds, 2) if seconds > 0 else None,
        "ms_per_message": round(1000 * seconds / count, 2),
        # CPU time of this process while the tasks ran: on a shared machine wall time
        # also counts other jobs, so this is the fairer number across sizes.
        "cpu_s": round(cpu_s, 3),
        "messages_per_cpu_s": round(count / cpu_s, 2) if cpu_s > 0 else None,
        "new_nodes": after["node"] - before["node"],
        "new_edges": after["edge"] - before["edge"],
        "unprocessed_episodes": processed,
        "breakdown": time_breakdown(seconds, model_load_s, embedder, extractor),
    }


# -- presenting ----------------------------------------------------------------------------


def _size_label(size: int) -> str:
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    if size >= 1_000 and size % 1_000 == 0:
        return f"{size // 1_000}k"
    return f"{size:,}"


def _vector_note(vectors: dict[str, dict[str, int]]) -> str:
    real = sum(v["real"] for v in vectors.values())
    derived = sum(v["derived"] for v in vectors.values())
    return f"{real:,} real + {derived:,} derived vectors" if derived else f"{real:,} real vectors"


def table(result: dict[str, Any]) -> str:
    """A summary row per size, then per layer a row per case with p50 / p95 per size."""
    runs: list[dict[str, Any]] = result["runs"]
    labels = [_size_label(r["size"]) for r in runs]
    lines = [
        "",
        f"scale: {result['params']['queries']} questions per case, page_size"
        f" {result['params']['page_size']}, ms per call (p50 / p95)",
        "",
    ]
    header = ["size", "nodes", "episodes", "vectors real / derived", "db MB", "bytes/fact"]
    header += ["ingest msg/s", "msg/CPU-s", "new edges", "edges/rrf hit@10"]
    body = []
    for run in runs:
        build, ing = run["build"], run.get("ingest")
        vec = run["vectors"]
        real = sum(v["real"] for v in vec.values())
        derived = sum(v["derived"] for v in vec.values())
        hit = next((r["hit_at_10"] for r in run["results"] if r["case"] == "edges/rrf"), "missing")
        body.append(
            [
                f"{run['size']:,}",
                f"{build['nodes']:,}",
                f"{build['episodes']:,}",
                f"{real:,} / {derived:,}",
                f"{run['db_bytes'] / 1e6:,.0f}",
                f"{run['bytes_per_fact']:,.0f}",
                f"{ing['messages_per_s']:.1f}" if ing and ing["messages_per_s"] else "-",
                f"{ing['messages_per_cpu_s']:.1f}" if ing and ing["messages_per_cpu_s"] else "-",
                f"{ing['new_edges']:,}" if ing else "-",
                "withheld" if hit is None else ("-" if hit == "missing" else f"{hit:.2f}"),
            ]
        )
    lines.append(text_table(header, body))
    layers = [
        layer
        for layer in search_cases.LAYERS
        if any(r["layer"] == layer for run in runs for r in run["results"])
    ]
    for layer in layers:
        cases: dict[str, list[str]] = {}
        for i, run in enumerate(runs):
            for r in run["results"]:
                if r["layer"] != layer:
                    continue
                row = cases.setdefault(r["case"], ["-"] * len(runs))
                mark = f"* (n={r['n']})" if r["stopped_early"] else ""
                row[i] = f"{ms(r['p50_ms'])} / {ms(r['p95_ms'])}{mark}"
        lines += ["", f"{layer} layer"]
        lines.append(text_table(["case", *labels], [[c, *v] for c, v in cases.items()]))
    if any(r["stopped_early"] for run in runs for r in run["results"]):
        lines.append("* stopped early: the case's time budget ran out after n questions")
    if any(run["derived_vectors"] for run in runs):
        lines.append(f"hit@10 withheld where {WITHHELD}")
    lines += [line for run in runs if (line := report.writes_line(run))]
    return "\n".join(lines)


def draw_chart(result: dict[str, Any], path: Path) -> bool:
    """p95 latency against size (log-log), one panel per layer, plus ingestion and
    bytes per fact; False if matplotlib is missing (pip install 'graphrecall[bench]')."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError:
        print("matplotlib is not installed: chart skipped (pip install 'graphrecall[bench]')")
        return False
    runs: list[dict[str, Any]] = result["runs"]
    layers = [
        layer
        for layer in search_cases.LAYERS
        if any(r["layer"] == layer for run in runs for r in run["results"])
    ]
    fig, axes = plt.subplots(1, len(layers) + 1, figsize=(5.2 * (len(layers) + 1), 4.6))
    axes_list: Sequence[Any] = list(axes) if len(layers) else [axes]
    sizes = [run["size"] for run in runs]
    cmap = plt.get_cmap("tab20")
    names = list(dict.fromkeys(r["case"] for run in runs for r in run["results"]))
    for ax, layer in zip(axes_list, layers, strict=False):
        for i, case in enumerate(names):
            points = [
                (run["size"], r["p95_ms"])
                for run in runs
                for r in run["results"]
                if r["layer"] == layer and r["case"] == case
            ]
            if points:
                xs, ys = zip(*points, strict=True)
                style = "--" if case.startswith(("nodes/", "context")) else "-"
                style = ":" if case.startswith("episodes/") else style
                ax.plot(xs, ys, style, marker="o", ms=3, color=cmap(i % 20), label=case)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.set_xticks(sizes, [_size_label(s) for s in sizes])
        ax.set_xlabel("facts in the graph")
        ax.set_ylabel("p95 ms per call (log)")
        ax.set_title(f"{layer} layer: p95 latency vs size")
        ax.grid(True, which="major", alpha=0.3)
    handles, labels = axes_list[0].get_legend_handles_labels()
    ax = axes_list[-1]
    for key, style, what in (("messages_per_s", "-", "wall"), ("messages_per_cpu_s", "--", "CPU")):
        points = [
            (run["size"], run["ingest"][key])
            for run in runs
            if run.get("ingest") and run["ingest"].get(key)
        ]
        if points:
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, style, marker="o", color="tab:green", label=f"messages per {what} s")
            ax.annotate(f"per {what} s", (xs[0], ys[0]), fontsize=7, color="tab:green")
    ax.set_xscale("log")
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.set_xticks(sizes, [_size_label(s) for s in sizes])
    ax.set_xlabel("facts in the graph")
    ax.set_ylabel("messages/s (offline pipeline)", color="tab:green")
    ax.set_ylim(bottom=0)
    twin = ax.twinx()
    twin.plot(sizes, [run["bytes_per_fact"] for run in runs], marker="s", color="tab:purple")
    twin.set_ylabel("database bytes per fact", color="tab:purple")
    twin.set_ylim(bottom=0)
    ax.set_title("ingestion throughput and storage")
    fig.legend(handles, labels, loc="lower center", ncol=min(7, len(labels) or 1), fontsize=7)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=72)
    plt.close(fig)
    return True
