"""A read point: within one, a backend reads each change log's newest position once and
reuses it, so a request's searches (a search's legs, get_context's scopes) check their
in-memory copies against one statement instead of one each.

Every read inside the block still sees at least what was committed before the block
began (the positions are read after it began), which is all a request may rely on; a
write committed while the request runs may or may not be seen, as without it. Only pure
reads open one (``retrieval.engine.search``, get_context): a block that writes and then
reads must not. Threads the request starts carry it when they run in a copy of its
context (``contextvars.copy_context().run``), as ``engine.beside`` does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from contextvars import ContextVar
from threading import Lock
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")
_LOCK = Lock()

_POINT: ContextVar[dict[Hashable, Future[Any]] | None] = ContextVar(
    "graphrecall_read_point", default=None
)


@contextmanager
def scope() -> Iterator[None]:
    """Open a read point for the block (joining the enclosing one, if any)."""
    if _POINT.get() is not None:
        yield
        return
    token = _POINT.set({})
    try:
        yield
    finally:
        _POINT.reset(token)


def within(fn: Callable[P, T]) -> Callable[P, T]:
    """``fn``, run inside a read point (joining the caller's, if any)."""

    @functools.wraps(fn)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> T:
        with scope():
            return fn(*args, **kwargs)

    return wrapped


def memo(key: Hashable, read: Callable[[], T]) -> T:
    """``read()``'s value, read once per read point (every time outside one): the
    threads that ask while the first reads wait for its value."""
    point = _POINT.get()
    if point is None:
        return read()
    with _LOCK:
        pending = point.get(key)
        first = pending is None
        if pending is None:
            pending = point[key] = Future()
    if first:
        try:
            pending.set_result(read())
        except BaseException as exc:
            pending.set_exception(exc)
    found: T = pending.result()
    return found
