"""The README's quickstart runs exactly as written against a live server (a process on
loopback: the quickstart makes its own client, over TCP)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Server

README = Path(__file__).resolve().parent.parent / "README.md"


# Slow: the quickstart's own client needs a server process on TCP.
@pytest.mark.slow
def test_quickstart_runs(make_server: Callable[..., Server]) -> None:
    server = make_server()
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python quickstart"
    code = (
        blocks[0]
        .replace("YOUR_KEY", server.api_key)
        .replace("http://127.0.0.1:8000/api/v4", server.base_url)
    )
    exec(compile(code, "README quickstart", "exec"), {})


def test_readme_commands_match_ci() -> None:
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    assert "pip install -e '.[dev]' && pytest" in text
    assert "pip install -e '.[dev]' && pytest" in ci
    assert "pip install . && graphrecall serve" in text
