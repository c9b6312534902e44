"""Fixtures: the published Zep v3 clients, and the Zep Cloud v2 / CE 2.x ones (LangChain
with zep-cloud 1.0.9, zep-python 2.0.2), each installed once into a cache of its own (the
suite's environment pins zep-cloud 4), and a graphrecall server on each backend.

``zep-cloud`` 3.30.0 comes from PyPI (``pip install --target``), ``@getzep/zep-cloud``
3.30.0 from npm (``npm install --prefix``); ``GRAPHRECALL_TEST_CACHE`` overrides the cache
directory. A client that cannot be fetched (no network, no npm) fails its tests, saying
which: tests that need a client are never skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from platformdirs import user_cache_dir

from tests import pg_server
from tests.conftest import API_KEY, Server, _free_port

PY_SDK = "zep-cloud==3.30.0"
TS_SDK = "@getzep/zep-cloud@3.30.0"
# Zep Cloud v2: LangChain's ZepCloudChatMessageHistory passes memory.get a memory_type,
# which only zep-cloud 1.x takes.
LANGCHAIN = ("langchain-community==0.4.2", "zep-cloud==1.0.9")
CE_SDK = "zep-python==2.0.2"  # the Zep Community Edition 2.x client


def _cache(name: str) -> Path:
    root = os.environ.get("GRAPHRECALL_TEST_CACHE") or user_cache_dir("graphrecall-tests")
    return Path(root) / name


def _fetch(target: Path, command: list[str], what: str) -> Path:
    """Run ``command`` (which installs into its last argument) into a private directory,
    then rename it to ``target``: concurrent runs never see half an install."""
    if target.exists():
        return target
    staging = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    done = subprocess.run([*command, str(staging)], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.fail(f"could not fetch {what}: {(done.stderr or done.stdout).strip()[-300:]}")
    try:
        staging.rename(target)
    except OSError:  # another run got there first
        shutil.rmtree(staging, ignore_errors=True)
    return target


@pytest.fixture(scope="session")
def zep_v3_python() -> Path:
    """A directory to put first on PYTHONPATH: zep-cloud 3.30.0 alone (its dependencies,
    pydantic and httpx, are the suite's own)."""
    return _fetch(
        _cache("zep-cloud-3.30.0-py"),
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", PY_SDK, "--target"],
        PY_SDK,
    )


@pytest.fixture(scope="session")
def zep_v3_node() -> Path:
    """A node_modules prefix holding @getzep/zep-cloud 3.30.0."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail(f"node and npm are needed to run {TS_SDK}")
    return _fetch(
        _cache("zep-cloud-3.30.0-node"),
        [npm, "install", "--no-audit", "--no-fund", "--silent", TS_SDK, "--prefix"],
        TS_SDK,
    )


@pytest.fixture(scope="session")
def zep_v2_langchain() -> Path:
    """A directory to put first on PYTHONPATH: langchain-community 0.4.2 and zep-cloud
    1.0.9 with their own dependencies (langchain-core, pydantic, ...), as a user would
    install them."""
    return _fetch(
        _cache("langchain-community-0.4.2-zep-cloud-1.0.9-py"),
        [sys.executable, "-m", "pip", "install", "--quiet", *LANGCHAIN, "--target"],
        " and ".join(LANGCHAIN),
    )


@pytest.fixture(scope="session")
def zep_ce_python() -> Path:
    """zep-python 2.0.2 alone (its dependencies, httpx, pydantic and the undeclared
    ``packaging``, are the suite's own)."""
    return _fetch(
        _cache("zep-python-2.0.2-py"),
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", CE_SDK, "--target"],
        CE_SDK,
    )


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    db: Path | str = tmp_path_factory.mktemp("v3") / "graphrecall.db"
    if request.param == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"v3{uuid.uuid4().hex}")
    srv = _started(Server(db, _free_port(), API_KEY))
    yield srv
    srv.stop()


def _started(srv: Server, patience_s: float = 240.0) -> Server:
    """``srv.start()``, given longer when the machine is loaded: a server still starting
    after the suite's 60 s (its models loading on shared cores) is waited for, not
    abandoned; one that exited, or is not up after ``patience_s`` more, fails."""
    try:
        return srv.start()
    except RuntimeError:
        if srv.process is None or srv.process.poll() is not None:
            raise
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{srv.port}/healthz", timeout=2).status_code == 200:
                return srv
        except httpx.HTTPError:
            pass
        if srv.process.poll() is not None:
            break
        time.sleep(0.5)
    srv.stop()
    raise RuntimeError(f"server did not come up in {60 + patience_s:.0f} s")


def v2_url(server: Server) -> str:
    """The base URL a Zep v3 user sets: the server's ``/api/v2``."""
    return f"http://127.0.0.1:{server.port}/api/v2"
