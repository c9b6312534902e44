"""Presenting ``bench longmemeval`` results: the printed tables and the PNG chart, both
from the result dictionary alone (what goes to JSON), so a saved run can be shown again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphrecall_bench.locomo_report import copies_note, lift_points
from graphrecall_bench.tables import ms, pct, text_table

LEVELS = ("session", "turn")
WHAT = ("recall_any", "recall_all", "ndcg")


def table(result: dict[str, Any]) -> str:
    ing = result["ingestion"]
    data = result["data"]
    ks = result["params"]["ks"]
    rankings = result["rankings"]
    lines = [
        "",
        f"LongMemEval evidence retrieval: {result['questions_answerable']} questions"
        f" ({result['questions_abstention']} abstention questions apart),"
        f" {data['turns']} turns, {data['split_turns']} turns over the message limit split,"
        f" fact extraction {'on' if result['params']['fact_extraction'] else 'OFF'}",
        f"ingestion through the SDK: {ing['messages']} messages in {ing['seconds']:.1f} s"
        f" = {ing['messages_per_s']:.1f} messages/s, {ing['seconds_per_question']} s per"
        f" question ({ing['failed_tasks']} failed tasks)" + copies_note(ing),
    ]
    for level in LEVELS:
        header = [f"{level} level (%)"]
        for k in ks:
            header += [f"any@{k}", f"all@{k}", f"ndcg@{k}"]
        body = []
        for name, m in rankings.items():
            row = [name]
            for k in ks:
                row += [pct(m.get(f"{level}_{what}@{k}")) for what in WHAT]
            body.append(row)
        lines += ["", text_table(header, body)]

    header = ["evidence recall (%)", *(f"@{k}" for k in ks)]
    body = [[name, *(pct(m.get(f"turn_recall@{k}")) for k in ks)] for name, m in rankings.items()]
    lines += ["", "share of each question's evidence turns in the top k (LoCoMo's recall)"]
    lines.append(text_table(header, body))

    shipped = rankings["search_episodes"]
    types = list(shipped["by_type"])
    header = ["search_episodes by type (%)", *types]
    keys = ("session_recall_any@5", "session_recall_any@10", "turn_recall_any@10", "turn_ndcg@10")
    body = [[k, *(pct(shipped["by_type"][t].get(k)) for t in types)] for k in keys]
    body.append(["questions", *(str(shipped["by_type"][t]["questions"]) for t in types)])
    lines += ["", text_table(header, body)]

    lift_keys = list(next(iter(result["lift_over_plain"].values())))
    header = ["lift of search_episodes over (points)", *lift_keys]
    body = [[name, *(lift_points(v.get(k)) for k in lift_keys)]
            for name, v in result["lift_over_plain"].items()]  # fmt: skip
    lines += ["", text_table(header, body)]

    header = ["facts and context (%)", "turn share", "turn any", "session any", "session all"]
    body = []
    edges, ctx = result["search_edges"], result.get("context")
    for label, c in (("search_edges (page 10)", edges), ("get_context", ctx),
                     ("  (counting nodes' turns)", (ctx or {}).get("with_nodes"))):  # fmt: skip
        if c:
            body.append([label, pct(c["turn_share"]), pct(c["turn_any"]), pct(c["session_any"]),
                         pct(c["session_all"])])  # fmt: skip
    lines += ["", text_table(header, body)]
    if ctx is None:
        lines.append(f"get_context: not measured ({result.get('context_error')})")

    header = ["latency through the SDK", "p50 ms", "p95 ms", "mean ms", "n"]
    body = [[name.replace("_", " "), ms(v["p50_ms"]), ms(v["p95_ms"]), ms(v["mean_ms"]),
             str(v["n"])] for name, v in result["latency"].items()]  # fmt: skip
    lines += ["", text_table(header, body)]
    return "\n".join(lines)


def draw_chart(result: dict[str, Any], path: Path) -> bool:
    """Session and turn recall_any@5/@10 per ranking; False if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: chart skipped (pip install 'graphrecall[bench]')")
        return False
    rankings = result["rankings"]
    fig, axes = plt.subplots(1, 2, figsize=(15, 5.2))
    names = list(rankings)
    for ax, level in zip(axes, LEVELS, strict=True):
        width = 0.2
        for i, k in enumerate((5, 10, 30, 50)):
            values = [100 * (rankings[n].get(f"{level}_recall_any@{k}") or 0) for n in names]
            ax.bar([x + (i - 1.5) * width for x in range(len(names))], values, width,
                   label=f"recall_any@{k}")  # fmt: skip
        if level == "session":
            ref = result["reference"]["longmemeval_paper_m_session_recall@5"]
            ax.axhline(100 * ref["bm25"], color="grey", linestyle=":", label="paper BM25 @5 (M)")
        ax.set_xticks(range(len(names)), [n.replace("hybrid_", "hyb. ") for n in names],
                      rotation=35, ha="right")  # fmt: skip
        ax.set_ylim(0, 100)
        ax.set_ylabel(f"{level} recall_any (%)")
        ax.set_title(f"LongMemEval {level} level ({result['questions_answerable']} questions)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
