"""Slow and numerous clients cannot hold ``graphrecall serve``: half-sent headers and
bodies are cut off at their deadlines, and connections beyond the cap get a 503."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import httpx
import pytest

from tests.conftest import Server

# Slow: real sockets held open against a server process until its deadlines pass.
pytestmark = pytest.mark.slow

LIMITS = {
    "GRAPHRECALL_HTTP_HEADER_TIMEOUT": "1",
    "GRAPHRECALL_HTTP_BODY_TIMEOUT": "1",
    "GRAPHRECALL_HTTP_KEEP_ALIVE_TIMEOUT": "1",
    "GRAPHRECALL_HTTP_MAX_CONNECTIONS": "40",
    "GRAPHRECALL_EMBEDDER": "none",
}


def connect(server: Server) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """What the server sends until it closes the connection (10 s at most)."""
    data = b""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    raise AssertionError(f"the server kept the connection open: {data!r}")


def test_slow_clients_are_cut_off(make_server: Callable[..., Server]) -> None:
    server = make_server(env=LIMITS)
    silent = connect(server)  # never sends a byte
    partial = connect(server)
    partial.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # headers never finish
    trickle = connect(server)
    trickle.sendall(b"POST /api/v4/graphs HTTP/1.1\r\nHost: x\r\ncontent-length: 100\r\n\r\n{")
    started = time.monotonic()
    assert b"408" in read_all(partial).split(b"\r\n")[0]
    assert b"408" in read_all(silent).split(b"\r\n")[0]
    assert b" 408 " in read_all(trickle).split(b"\r\n")[0]
    assert time.monotonic() - started < 8
    idle = connect(server)
    idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert b" 200 " in read_all(idle).split(b"\r\n")[0]  # then closed when idle
    # The server still answers.
    assert httpx.get(f"http://127.0.0.1:{server.port}/healthz", timeout=10).status_code == 200


def test_connections_beyond_the_cap_get_503(make_server: Callable[..., Server]) -> None:
    server = make_server(env=LIMITS | {"GRAPHRECALL_HTTP_HEADER_TIMEOUT": "30"})
    held = []
    for _ in range(40):
        sock = connect(server)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # open, unfinished
        held.append(sock)
    time.sleep(0.5)
    response = httpx.get(f"http://127.0.0.1:{server.port}/healthz", timeout=10)
    assert response.status_code == 503
    for sock in held:
        sock.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        response = httpx.get(f"http://127.0.0.1:{server.port}/healthz", timeout=10)
        if response.status_code == 200:
            return
        time.sleep(0.1)
    raise AssertionError("the server did not recover after the connections closed")
