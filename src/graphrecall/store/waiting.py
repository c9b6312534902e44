"""Waiting for a background copy (a term index, a saved image) by polling its state under
its lock: for servers before they listen, benchmarks and tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

POLL_S = 0.01


def wait_until(condition: Callable[[], bool], lock: threading.Lock, timeout: float) -> bool:
    """True once ``condition()`` (checked under ``lock``) holds, False if it still does
    not after ``timeout`` seconds (checked at least once)."""
    deadline = time.monotonic() + timeout
    while True:
        with lock:
            if condition():
                return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
