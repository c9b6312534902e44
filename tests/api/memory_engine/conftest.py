"""Fixtures: a graphrecall server with a Memory Engine space, the real ``me`` 0.8.0
client binary (fetched once with npm into a cache outside the repository), and a raw
JSON-RPC helper.

The binary comes from the npm package ``@memory.build/cli-linux-x64@0.8.0`` (a Bun
single-file executable); ``GRAPHRECALL_TEST_CACHE`` overrides the cache directory.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import tarfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platformdirs import user_cache_dir

from tests import pg_server
from tests.conftest import API_KEY, Server, _free_port

ME_PACKAGE = "@memory.build/cli-linux-x64@0.8.0"
SPACE = "testspace001"


def _cache_dir() -> Path:
    root = os.environ.get("GRAPHRECALL_TEST_CACHE") or user_cache_dir("graphrecall-tests")
    return Path(root) / "me-0.8.0"


@pytest.fixture(scope="session")
def me_binary() -> Path:
    """The ``me`` executable, downloaded on first use and cached."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the me 0.8.0 binary on npm is built for linux-x64 only")
    target = _cache_dir()
    binary = target / "package" / "bin" / "me"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is needed to fetch the me client (@memory.build/cli-linux-x64)")
    # Fetch into a private directory, then rename: concurrent runs never see half a file.
    staging = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    packed = subprocess.run(
        [npm, "pack", ME_PACKAGE, "--pack-destination", str(staging), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if packed.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.skip(f"could not fetch {ME_PACKAGE} with npm: {packed.stderr.strip()[-300:]}")
    tarball = staging / json.loads(packed.stdout)[0]["filename"]
    with tarfile.open(tarball) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(staging, filter="data")
        else:  # Python < 3.11.4
            archive.extractall(staging)
    tarball.unlink()
    (staging / "package" / "bin" / "me").chmod(0o755)
    try:
        staging.rename(target)
    except OSError:  # another run got there first
        shutil.rmtree(staging, ignore_errors=True)
    return binary


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def me_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A server whose GRAPHRECALL_SPACE makes ``serve`` create the space: on SQLite, and
    on PostgreSQL (``tests/pg_server.py``; a schema of its own)."""
    db: Path | str = tmp_path_factory.mktemp("me") / "graphrecall.db"
    if request.param == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"me{uuid.uuid4().hex}")
    # Memory Engine's own behaviour (history and revert outlive a delete) is what these
    # tests check; graphrecall's default erases a deleted memory's history
    # (tests/services/test_erasure.py), so they run with a retention window.
    env = {"GRAPHRECALL_SPACE": SPACE, "GRAPHRECALL_DELETED_HISTORY_SECONDS": "86400"}
    srv = Server(db, _free_port(), API_KEY, env).start()
    yield srv
    srv.stop()


def base(server: Server) -> str:
    return f"http://127.0.0.1:{server.port}"


class Me:
    """Runs the real ``me`` client against a server, as a user would."""

    def __init__(self, binary: Path, server: Server, home: Path) -> None:
        self.binary, self.server, self.home = binary, server, home

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "ME_SERVER": base(self.server),
            "ME_API_KEY": self.server.api_key,
            "ME_SPACE": SPACE,
            "NO_COLOR": "1",
        }
        return subprocess.run(
            [str(self.binary), *args],
            env=env,
            capture_output=True,
            text=True,
            input=input,
            timeout=120,
        )

    def ok(self, *args: str) -> str:
        result = self.run(*args)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok("--json", *args))

    def fails(self, *args: str) -> str:
        """Runs a command that must fail; returns what it printed."""
        result = self.run("--json", *args)
        assert result.returncode != 0, result.stdout
        return result.stdout + result.stderr


@pytest.fixture(scope="session")
def me(me_binary: Path, me_server: Server, tmp_path_factory: pytest.TempPathFactory) -> Me:
    return Me(me_binary, me_server, tmp_path_factory.mktemp("me-home"))


RpcCall = Callable[..., dict[str, Any]]


@pytest.fixture(scope="session")
def rpc(me_server: Server) -> RpcCall:
    """``rpc(method, params)`` -> the JSON-RPC response body."""

    def call(method: str, params: Any = None, **headers: str) -> dict[str, Any]:
        hdrs = {"Authorization": f"Bearer {me_server.api_key}", "X-Me-Space": SPACE, **headers}
        body = {"jsonrpc": "2.0", "method": method, "id": 1, "params": params or {}}
        response = httpx.post(f"{base(me_server)}/api/v1/memory/rpc", json=body, headers=hdrs)
        assert response.status_code == 200, response.text
        return dict(response.json())

    return call


def result(response: dict[str, Any]) -> Any:
    assert "error" not in response, response
    return response["result"]


def app_error(response: dict[str, Any]) -> tuple[str, str, str | None]:
    """(data.code, message, data.param) of a -32000 application error."""
    error = response["error"]
    assert error["code"] == -32000, error
    return error["data"]["code"], error["message"], error["data"].get("param")


def wait_embedded(rpc: RpcCall, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result(rpc("memory.embeddingStatus"))["pending"] == 0:
            return
        time.sleep(0.1)
    raise AssertionError("memories were not embedded in time")
