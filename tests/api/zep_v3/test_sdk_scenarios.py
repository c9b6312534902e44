"""An ordinary agent's calls through the unmodified published Zep v3 SDKs against
graphrecall's /api/v2, on each backend: Python ``zep-cloud`` 3.30.0 (scenario_py.py, in
a child interpreter with that SDK first on its path) and TypeScript
``@getzep/zep-cloud`` 3.30.0 (scenario_ts.cjs, under node). Every call passes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.api.zep_v3.conftest import v2_url
from tests.conftest import Server

HERE = Path(__file__).parent
# The calls each scenario makes (one JSON line each): user, thread, messages, task,
# processed messages, context, graph add (text, JSON), search (edges, nodes, episodes),
# the user's threads, graphs, the item routes, the thread's summary, a message's
# metadata, the episode list, observations, warm, a fact triple, an ontology, and the
# deletes.
CALLS = 40


def _results(done: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _assert_all_pass(results: list[dict[str, object]]) -> None:
    failed = [r for r in results if not r["ok"]]
    assert not failed, json.dumps(failed, indent=1)
    assert len(results) == CALLS, [r["call"] for r in results]


def test_the_agent_scenario_passes_through_the_python_sdk(
    server: Server, zep_v3_python: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(zep_v3_python), "SCENARIO_USER": "py"}
    # The child imports the cached 3.30.0, not the suite's zep-cloud 4.
    imported = subprocess.run(
        [
            sys.executable,
            "-c",
            "import zep_cloud; print(zep_cloud.__version__, zep_cloud.__file__)",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert imported[0] == "3.30.0" and imported[1].startswith(str(zep_v3_python))
    done = subprocess.run(
        [sys.executable, str(HERE / "scenario_py.py"), v2_url(server), server.api_key],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    _assert_all_pass(_results(done))


def test_the_agent_scenario_passes_through_the_typescript_sdk(
    server: Server, zep_v3_node: Path
) -> None:
    node = shutil.which("node")
    assert node is not None  # the fixture failed otherwise
    modules = zep_v3_node / "node_modules"
    package = json.loads((modules / "@getzep" / "zep-cloud" / "package.json").read_text())
    assert package["version"] == "3.30.0"
    done = subprocess.run(
        [node, str(HERE / "scenario_ts.cjs"), v2_url(server), server.api_key],
        env={**os.environ, "NODE_PATH": str(modules), "SCENARIO_USER": "ts"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    _assert_all_pass(_results(done))
