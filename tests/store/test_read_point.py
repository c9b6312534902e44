"""A read point (store/read_point.py): a value is read once per point, by whichever thread
asks first (the others wait for it), every time outside a point, and a nested point joins
the outer one."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest

from graphrecall.store import read_point


def counter() -> tuple[list[int], Callable[[], int]]:
    reads: list[int] = []

    def read() -> int:
        time.sleep(0.05)  # slow enough that the other threads ask while it reads
        reads.append(threading.get_ident())
        return len(reads)

    return reads, read


def test_outside_a_point_every_call_reads() -> None:
    reads, read = counter()
    assert [read_point.memo("k", read) for _ in range(3)] == [1, 2, 3]
    assert len(reads) == 3


def test_a_point_reads_once_for_all_its_threads_and_a_new_point_reads_again() -> None:
    reads, read = counter()
    with ThreadPoolExecutor(max_workers=4) as pool, read_point.scope():
        ask = partial(read_point.memo, "k", read)
        futures = [pool.submit(contextvars.copy_context().run, ask) for _ in range(8)]
        assert {f.result() for f in futures} == {1}
        with read_point.scope():  # joins the outer point
            assert read_point.memo("k", read) == 1
        assert read_point.memo("other", read) == 2
    with read_point.scope():
        assert read_point.memo("k", read) == 3
    assert len(reads) == 3


def test_a_failed_read_fails_every_asker_of_that_point() -> None:
    def broken() -> int:
        raise RuntimeError("database gone")

    with read_point.scope():
        for _ in range(2):
            with pytest.raises(RuntimeError, match="database gone"):
                read_point.memo("k", broken)
