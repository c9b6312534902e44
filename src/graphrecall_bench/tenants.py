"""Two tenants on one server, for the benches that measure how much one slows the other
(``bench isolation``, ``bench stall``): the victim's timed calls, the attackers' clients in
a process of their own, and the latency summary both report."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")
# One of the attackers' clients: (*args, stop, out) -> None, appending (ms, answer kind)
# to ``out`` until ``stop`` is set; a top-level function (it is sent to a new process).
Attack = Callable[..., None]


def time_calls(
    call: Callable[[int], T], seconds: float, pause_s: float, ok: Callable[[T], bool]
) -> list[float]:
    """``call(i)`` one after another for ``seconds``, ``pause_s`` apart: latencies in ms.
    A call ``ok`` refuses ends the run (the victim must never be refused)."""
    times: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        answer = call(len(times))
        times.append((time.perf_counter() - started) * 1000)
        if not ok(answer):
            raise RuntimeError(f"the victim tenant got {str(answer)[:300]}")
        time.sleep(pause_s)
    return times


def _attackers(
    attack: Attack, args: tuple[Any, ...], clients: int, seconds: float, queue: Any
) -> None:
    """The attackers' clients, in a process of their own: the bench's interpreter lock is
    then the victim's alone, and the victim's times are the server's."""
    stop = threading.Event()
    out: list[tuple[float, str]] = []
    threads = [
        threading.Thread(target=attack, args=(*args, stop, out), daemon=True)
        for _ in range(clients)
    ]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(600)
    queue.put(out)


def under_attack(
    attack: Attack,
    args: tuple[Any, ...],
    clients: int,
    seconds: float,
    victim: Callable[[], list[float]],
) -> tuple[list[float], list[tuple[float, str]]]:
    """``victim()`` timed while ``clients`` threads run ``attack(*args, stop, out)``; the
    attack starts a moment first (its load is up before the victim is timed). The
    victim's latencies and the attackers' (ms, answer kind) pairs."""
    spawn = multiprocessing.get_context("spawn")
    queue = spawn.Queue()
    ramp = min(1.0, seconds)
    process = spawn.Process(target=_attackers, args=(attack, args, clients, seconds + ramp, queue))
    process.start()
    try:
        time.sleep(ramp)
        loaded = victim()
        attacks: list[tuple[float, str]] = queue.get(timeout=1200)
    finally:
        process.join(60)
        if process.is_alive():
            process.kill()
    return loaded, attacks


def answers(attacks: list[tuple[float, str]]) -> dict[str, int]:
    """How many of the attackers' requests got each kind of answer."""
    out: dict[str, int] = {}
    for _, kind in attacks:
        out[kind] = out.get(kind, 0) + 1
    return out


def latency_stats(times: list[float]) -> dict[str, float]:
    return {
        "requests": float(len(times)),
        "p50_ms": float(np.percentile(times, 50)),
        "p95_ms": float(np.percentile(times, 95)),
        "max_ms": float(np.max(times)),
    }
