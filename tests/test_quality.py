"""Lint and type checks run as part of the suite, so CI enforces them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff() -> None:
    ruff = str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        ruff = shutil.which("ruff") or "ruff"
    check = run(ruff, "check", "src", "tests")
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = run(ruff, "format", "--check", "src", "tests")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict() -> None:
    result = run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr
