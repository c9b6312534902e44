"""Presenting ``bench locomo`` results: the printed table and the PNG chart. Both read
only the result dictionary (what goes to JSON), so a saved run can be shown again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphrecall.library.locomo import CATEGORIES
from graphrecall_bench.tables import ms, pct, text_table


def copies_note(ing: dict[str, Any]) -> str:
    """When the server's index copies were built again after the ingestion: the latencies
    are measured after it (absent from runs before 2026-12-04)."""
    built = ing.get("copies_built_s")
    return "" if built is None else f"; index copies built {built} s after"


def table(result: dict[str, Any]) -> str:
    episodes = result["search_episodes"]
    edges = result["search_edges"]
    context = result.get("context")
    ing = result["ingestion"]
    params = result["params"]
    reference = result["reference"]
    names = [n for n in CATEGORIES.values() if n in episodes["by_category"]]
    names += [n for n in episodes["by_category"] if n not in names]
    lines = [
        "",
        f"LoCoMo evidence retrieval: {result['questions']} questions"
        f" ({result['evidence_turns']} evidence turns, {result['unresolved_evidence']}"
        f" evidence ids unresolved, {len(result['normalised_evidence_ids'])} normalised),"
        f" {result['params']['samples']} samples, fact extraction"
        f" {'OFF' if params.get('fact_extraction') is False else 'on'}",
        f"ingestion through the SDK: {ing['messages']} messages in {ing['seconds']:.1f} s"
        f" = {ing['messages_per_s']:.1f} messages/s ({ing['failed_tasks']} failed tasks)"
        + copies_note(ing),
        "",
    ]
    header = ["metric (%)", "overall", *names]

    def cat_row(label: str, block: dict[str, Any] | None, key: str) -> list[str]:
        if not block:
            return [label, "-", *("-" for _ in names)]
        cats = block.get("by_category", {})
        return [label, pct(block.get(key)), *(pct(cats.get(n, {}).get(key)) for n in names)]

    body = [
        cat_row("search_episodes recall@5", episodes, "recall@5"),
        cat_row("search_episodes recall@10", episodes, "recall@10"),
        cat_row("search_episodes recall@25", episodes, "recall@25"),
        cat_row("search_episodes NDCG@10", episodes, "ndcg@10"),
        cat_row("search_edges recall@10", edges, "recall@10"),
        cat_row("get_context coverage", context, "coverage"),
        cat_row("  (counting nodes' turns)", context, "coverage_with_nodes"),
        [
            "questions",
            str(episodes["questions"]),
            *(str(episodes["by_category"][n]["questions"]) for n in names),
        ],
    ]
    lines.append(text_table(header, body))
    if context is None:
        lines.append(f"get_context: not measured ({result.get('context_error')})")

    lines.append("")
    header = ["episodes baseline", "recall@5", "recall@10", "NDCG@10", "p50 ms", "p95 ms", "layer"]
    body = []
    for name, b in result["baselines"].items():
        body.append(
            [
                name,
                pct(b["recall@5"]),
                pct(b["recall@10"]),
                pct(b["ndcg@10"]),
                ms(b["p50_ms"]),
                ms(b["p95_ms"]),
                b["layer"],
            ]
        )
    ref = reference["locomo_table3_dragon_recall"]
    plain = result.get("plain_baselines") or {}
    for name in ("plain_bm25", "plain_cosine", "plain_rrf"):
        if name in plain:
            b = plain[name]
            body.append(
                [name, pct(b["recall@5"]), pct(b["recall@10"]), pct(b["ndcg@10"]), "-", "-",
                 "plain turns"]
            )  # fmt: skip
    body.append(
        ["LoCoMo paper, DRAGON", pct(ref["@5"]), pct(ref["@10"]), "-", "-", "-", "published"]
    )
    lines.append(text_table(header, body))

    if plain:
        lines.append("")
        lines.append(lift_table(episodes, plain, ("recall@5", "recall@10", "recall@25", "ndcg@10")))

    lines.append("")
    header = ["latency through the SDK", "p50 ms", "p95 ms", "mean ms"]
    body = [
        [f"search_episodes (page {params['episode_page']})", ms(episodes["p50_ms"]),
         ms(episodes["p95_ms"]), ms(episodes["mean_ms"])],
        [f"search_edges (page {params['page']})", ms(edges["p50_ms"]), ms(edges["p95_ms"]),
         ms(edges["mean_ms"])],
    ]  # fmt: skip
    first = episodes.get("first_per_graph") or {}
    if first.get("n"):
        body.append(
            [
                f"first search_episodes to a graph ({first['n']} graphs)",
                ms(first["p50_ms"]),
                ms(first["p95_ms"]),
                ms(first["mean_ms"]),
            ]
        )
    if context:
        body.append(
            [
                f"get_context ({params['context_max_characters']:,} chars)",
                ms(context["p50_ms"]),
                ms(context["p95_ms"]),
                ms(context["mean_ms"]),
            ]
        )
    for name, ref_lat in reference["mem0_paper_search_latency_ms"].items():
        body.append([f"{name} (Mem0 paper, hosted)", str(ref_lat["p50"]), str(ref_lat["p95"]), "-"])
    lines.append(text_table(header, body))

    lines.append("")
    for name, v in result["target_verdicts"].items():
        if v["measured"] is None:
            lines.append(f"target {name} >= {pct(v['target'])} %: not measured")
        else:
            status = "MET" if v["met"] else "NOT MET"
            lines.append(
                f"target {name} >= {pct(v['target'])} %: {pct(v['measured'])} % -> {status}"
            )
    return "\n".join(lines)


def lift_table(episodes: dict[str, Any], plain: dict[str, Any], keys: tuple[str, ...]) -> str:
    """Points the shipped episode search gains over each plain baseline."""
    header = ["lift of search_episodes over (points)", *keys]
    body = []
    for name in ("plain_bm25", "plain_cosine", "plain_rrf"):
        lift = plain.get(name, {}).get("lift_of_search_episodes", {})
        body.append([name, *(lift_points(lift.get(k)) for k in keys)])
    return text_table(header, body)


def lift_points(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f}"


def draw_chart(result: dict[str, Any], path: Path) -> bool:
    """Recall per system, recall@10 per category, and latency; False if matplotlib is
    missing (it is an optional extra: pip install 'graphrecall[bench]')."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: chart skipped (pip install 'graphrecall[bench]')")
        return False
    episodes = result["search_episodes"]
    edges = result["search_edges"]
    context = result.get("context")
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2))

    ax = axes[0]
    systems = [("search_episodes", episodes), *result["baselines"].items()]
    width = 0.38
    xs = list(range(len(systems)))
    for offset, k in ((-width / 2, "recall@5"), (width / 2, "recall@10")):
        values = [100 * (m.get(k) or 0) for _, m in systems]
        ax.bar([x + offset for x in xs], values, width, label=k)
    ref = result["reference"]["locomo_table3_dragon_recall"]
    ax.axhline(100 * ref["@5"], color="grey", linestyle=":", label="DRAGON @5 (paper)")
    ax.axhline(100 * ref["@10"], color="black", linestyle="--", label="DRAGON @10 (paper)")
    extra = [("edges @10", edges.get("recall@10"))]
    if context:
        extra.append(("context cov.", context.get("coverage")))
    for i, (_, value) in enumerate(extra):
        ax.bar(len(systems) + i, 100 * (value or 0), width, color="tab:green")
    labels = [name.replace("hybrid_", "hyb. ") for name, _ in systems] + [e[0] for e in extra]
    ax.set_xticks(range(len(labels)), labels, rotation=35, ha="right")
    ax.set_ylabel("evidence recall (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"LoCoMo evidence recall ({result['questions']} questions)")
    ax.legend(fontsize=8)

    ax = axes[1]
    names = list(episodes["by_category"])
    series = [("search_episodes", episodes["by_category"])] + [
        (name, b["by_category"]) for name, b in result["baselines"].items()
    ]
    width = 0.8 / len(series)
    for i, (label, cats) in enumerate(series):
        values = [100 * (cats.get(n, {}).get("recall@10") or 0) for n in names]
        ax.bar([x + (i - len(series) / 2 + 0.5) * width for x in range(len(names))], values,
               width, label=label)  # fmt: skip
    ax.set_xticks(range(len(names)), names)
    ax.set_ylim(0, 100)
    ax.set_ylabel("recall@10 (%)")
    ax.set_title("recall@10 by question category")
    ax.legend(fontsize=7)

    ax = axes[2]
    calls = [("search_episodes", episodes), ("search_edges", edges)]
    if context:
        calls.append(("get_context", context))
    calls += [(n, b) for n, b in result["baselines"].items()]
    xs = list(range(len(calls)))
    ax.bar([x - 0.2 for x in xs], [c.get("p50_ms") or 0 for _, c in calls], 0.4, label="p50")
    ax.bar([x + 0.2 for x in xs], [c.get("p95_ms") or 0 for _, c in calls], 0.4, label="p95")
    lat = result["reference"]["mem0_paper_search_latency_ms"]
    ax.axhline(lat["mem0"]["p50"], color="grey", linestyle=":", label="Mem0 p50 (paper)")
    ax.axhline(lat["zep"]["p50"], color="black", linestyle="--", label="Zep p50 (paper)")
    ax.set_yscale("log")
    ax.set_ylim(top=5000)  # room for the legend above the reference lines
    ax.set_xticks(xs, [n.replace("hybrid_", "hyb. ") for n, _ in calls], rotation=35, ha="right")
    ax.set_ylabel("ms per call (log)")
    ax.set_title("latency (SDK; bm25/vector in-process)")
    ax.legend(fontsize=8)

    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
