"""Plain-text tables and the target verdict for the search benchmark's results (the
dictionaries written to JSON), so the same code prints a live run and a saved file."""

from __future__ import annotations

from typing import Any


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def table(run: dict[str, Any], queries: int) -> str:
    """One size's results: a row per case, p50/p95 per layer, then hit@10."""
    build = run["build"]
    size = run["size"]
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for r in run["results"]:
        rows.setdefault(r["case"], {})[r["layer"]] = r
    layers = [
        name for name in ("engine", "service", "sdk") if any(name in v for v in rows.values())
    ]
    header = ["case"] + [f"{name} p50/p95" for name in layers]
    if "sdk" in layers:
        header.append("sdk mean")
    header.append("hit@10")
    body: list[list[str]] = []
    for case, by_layer in rows.items():
        line = [case]
        for name in layers:
            r = by_layer.get(name)
            mark = "*" if r and r["stopped_early"] else ""
            line.append(f"{_ms(r['p50_ms'])} / {_ms(r['p95_ms'])}{mark}" if r else "-")
        if "sdk" in layers:
            sdk = by_layer.get("sdk")
            line.append(_ms(sdk["mean_ms"]) if sdk else "-")
        first = next(iter(by_layer.values()))
        line.append(f"{first['hit_at_10']:.2f}")
        body.append(line)
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        pairs = zip(row[1:], widths[1:], strict=True)
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in pairs]
        return "  ".join(cells)

    rate = build.get("embed_texts_per_s")
    cached = " (cached build)" if build.get("cached") else ""
    extra = run.get("extra", {})
    lines = [
        "",
        f"search latency, {size:,} facts in one graph: ms per call, page_size 10,"
        f" {queries} questions per case",
        f"build{cached}: generate {build['generate_s']:.1f} s, insert {build['insert_s']:.1f} s,"
        f" embed {build['embed_s']:.1f} s"
        + (f" ({build['embed_texts']:,} texts, {rate:,.0f}/s)" if rate else "")
        + f"; {build['nodes']:,} nodes, {build['edges']:,} edges, {build['episodes']:,} episodes;"
        f" db {build['db_bytes'] / 1e6:.1f} MB = {build['db_bytes_per_fact']:,.0f} bytes/fact",
    ]
    if "query_embedding_ms" in extra:
        q = extra["query_embedding_ms"]
        lines.append(
            f"query embedding alone: p50 {_ms(q['p50'])} / p95 {_ms(q['p95'])} ms;"
            f" first search (cold: model + vector matrix load):"
            f" {_ms(extra.get('first_search_ms'))} ms"
        )
    written = writes_line(run)
    if written:
        lines.append(written)
    lines += ["", fmt(header), fmt(["-" * w for w in widths]), *(fmt(row) for row in body)]
    if any(r["stopped_early"] for r in run["results"]):
        lines.append("* stopped early: the case's time budget ran out (see n in the JSON)")
    return "\n".join(lines)


def writes_line(run: dict[str, Any]) -> str | None:
    """What ``--write-rate`` wrote while one size was searched, and how often the
    in-memory term indexes caught up with it (None when nothing was written)."""
    extra = run.get("extra", {})
    w = extra.get("writes")
    if not w:
        return None
    caught = [
        f"{layer} {extra[key].get('caught_up', 0):,}"
        for layer, key in (("engine", "indexes_after_engine"), ("sdk", "indexes_after_sdk"))
        if key in extra
    ]
    return (
        f"[{run['size']:,}] while searching: {w['facts']:,} facts and {w['messages']:,} messages"
        f" written, {w['achieved_per_s']:.1f} a second"
        + (f"; term-index catch-ups: {', '.join(caught)}" if caught else "")
    )


def verdicts(result: dict[str, Any]) -> list[dict[str, Any]]:
    """For each size: the target case's p95 at the target layer, and whether it meets it."""
    target = result["target"]
    out = []
    for run in result["runs"]:
        for r in run["results"]:
            if r["case"] == target["case"] and r["layer"] == target["layer"]:
                out.append(
                    {
                        "size": run["size"],
                        "p95_ms": r["p95_ms"],
                        "met": r["p95_ms"] <= target["p95_ms_max"],
                        "at_target_size": run["size"] >= target["size"],
                    }
                )
    return out


def target_lines(result: dict[str, Any]) -> str:
    target = result["target"]
    what = (
        f"target: {target['case']} p95 <= {target['p95_ms_max']:.0f} ms through the"
        f" {target['layer']} at {target['size']:,} facts"
    )
    found = result["target"].get("verdicts") or []
    if not found:
        return f"{what}: not measured (needs the {target['layer']} layer and case)"
    lines = [what]
    for v in found:
        status = "MET" if v["met"] else "NOT MET"
        note = "" if v["at_target_size"] else " (smaller than the target size)"
        lines.append(f"  {v['size']:>9,} facts: p95 {v['p95_ms']:.1f} ms -> {status}{note}")
    return "\n".join(lines)
