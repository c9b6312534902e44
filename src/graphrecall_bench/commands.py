"""The ``graphrecall bench`` subcommands, declared without importing any benchmark (the
``graphrecall.commands`` entry point names :func:`add_commands`)."""

from __future__ import annotations

from typing import Any

from graphrecall.cli.extensions import LazyCommand, add_lazy

# Every benchmark drives the server, or builds its database, through the Zep SDK.
_SDK = ("zep_cloud",)

COMMANDS = (
    ("search", "search latency on synthetic graphs (in-process and through the SDK)"),
    ("memory", "memory.search latency per mode (in-process and JSON-RPC over HTTP)"),
    ("locomo", "LoCoMo evidence recall, context coverage and latency"),
    (
        "longmemeval",
        "LongMemEval-S evidence recall (its own metrics), baselines, latency, ingestion",
    ),
    ("judge", "a ranking change on both data sets' bench databases: recall, halves, verdict"),
    ("ingest", "LoCoMo ingestion: messages/s, graph yield, sampled facts"),
    ("extract", "extraction quality: precision, recall, dates, duplicates"),
    ("batch", "live add_messages latency while a batch runs vs idle"),
    ("low-quality", "LoCoMo: results kept and recall@10 with filter_low_quality_results"),
    ("isolation", "one tenant's worst-case regex searches: the delay they add to another tenant"),
    ("stall", "one tenant's heavy valid requests: another tenant's p50 against its idle p50"),
    ("cold", "first query to each of many user graphs (cold) vs again (warm), through the SDK"),
    ("scale", "10k/100k/1M facts: search and get_context p50/p95, ingestion, bytes per fact, PNG"),
)


def declared() -> list[LazyCommand]:
    found = [
        LazyCommand(name, text, f"graphrecall_bench.{name.replace('-', '_')}", "bench", _SDK)
        for name, text in COMMANDS
    ]
    found.append(
        LazyCommand(
            "graphiti",
            "Graphiti (optional extra) side by side: hybrid edge search latency and hit@10",
            "graphrecall_bench.graphiti",
            "graphiti",
            ("graphiti_core", "zep_cloud"),
        )
    )
    return found


def add_commands(sub: Any) -> None:
    bench = sub.add_parser("bench", help="benchmarks: print a table and write JSON")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    for command in declared():
        add_lazy(bench_sub, command)
