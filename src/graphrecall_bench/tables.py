"""Plain-text tables and small numeric helpers shared by the LoCoMo and ingest benchmarks."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell: the first left-aligned, the rest right."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def fmt(row: Sequence[str]) -> str:
        cells = [str(row[0]).ljust(widths[0])]
        cells += [str(c).rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        return "  ".join(cells).rstrip()

    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows)])


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def latency(samples_ms: Sequence[float]) -> dict[str, Any]:
    """p50/p95/mean of wall-clock samples in milliseconds (None when there are none)."""
    if not samples_ms:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "mean_ms": None}
    arr = np.asarray(samples_ms, dtype=np.float64)
    p50, p95 = np.percentile(arr, [50, 95])
    return {
        "n": len(samples_ms),
        "p50_ms": round(float(p50), 3),
        "p95_ms": round(float(p95), 3),
        "mean_ms": round(float(arr.mean()), 3),
    }


def mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), 4) if values else None


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write atomically, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
