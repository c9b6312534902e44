"""An agent's calls through the unmodified published Zep Cloud v2 and Zep CE 2.x clients
against graphrecall's /api/v2, on each backend: LangChain's ``ZepCloudChatMessageHistory``
with ``zep-cloud`` 1.0.9 (scenario_langchain.py) and ``zep-python`` 2.0.2
(scenario_ce.py), each in a child interpreter with its client first on its path. Every
call passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.api.zep_v3.test_sdk_scenarios import _results
from tests.conftest import Server

HERE = Path(__file__).parent
# user, session, three ways of adding messages, read back, facts learned, the condensed
# history, lastn, message / fact / cross-session search, the session, the user's
# sessions, the session list, its messages, message metadata, clear, user delete.
LANGCHAIN_CALLS = 19
# user, session, memory add, facts learned, lastn, fact / message / MMR search across
# sessions, the session, its messages, a fact by uuid, the session list, memory delete,
# user delete.
CE_CALLS = 14


def _imported(env: dict[str, str], module: str) -> list[str]:
    return subprocess.run(
        [sys.executable, "-W", "ignore", "-c", f"import {module} as m; print(m.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()


def _assert_all(done: subprocess.CompletedProcess[str], calls: int) -> None:
    results = _results(done)
    failed = [r for r in results if not r["ok"]]
    assert not failed, json.dumps(failed, indent=1)
    assert len(results) == calls, [r["call"] for r in results]


def test_langchain_chat_history_passes_through_zep_cloud_1(
    server: Server, zep_v2_langchain: Path
) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(zep_v2_langchain),
        # The LangChain class builds its own client with no URL: zep-cloud 1.x reads this.
        "ZEP_API_URL": f"http://127.0.0.1:{server.port}",
        "SCENARIO_USER": "lc",
    }
    # The child imports the cached 1.0.9 and langchain-community, not the suite's.
    version = subprocess.run(
        [sys.executable, "-c", "from zep_cloud.version import __version__; print(__version__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version == "1.0.9"
    assert _imported(env, "langchain_community")[0].startswith(str(zep_v2_langchain))
    done = subprocess.run(
        [sys.executable, str(HERE / "scenario_langchain.py"), server.api_key],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    _assert_all(done, LANGCHAIN_CALLS)


def test_zep_ce_2_client_passes(server: Server, zep_ce_python: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(zep_ce_python), "SCENARIO_USER": "ce"}
    env.pop("ZEP_API_URL", None)  # the CE client would read it before its base_url
    assert _imported(env, "zep_python")[0].startswith(str(zep_ce_python))
    done = subprocess.run(
        [
            sys.executable,
            str(HERE / "scenario_ce.py"),
            f"http://127.0.0.1:{server.port}",  # the CE client appends /api/v2
            server.api_key,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    _assert_all(done, CE_CALLS)
